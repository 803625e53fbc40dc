// The values that cross between the wasm module and JavaScript, each by name on both sides: what
// tilefetch hands to JS (a tile, a TileError, the onRetry info, stats, events) is built here in
// one call each, from named parameters that match the Rust declarations in wire.rs; what it reads
// from caller values comes back as named objects (see the typedefs). tests/wire.rs checks that
// every declaration in src/web/*.rs agrees with this file and the other snippets, name by name.

export class TileError extends Error {
  constructor(message, fields) {
    super(message, fields.cause === undefined ? undefined : { cause: fields.cause });
    this.name = "TileError";
    this.kind = fields.kind;
    if (fields.status !== undefined) this.status = fields.status;
    this.attempts = fields.attempts;
    this.elapsedMs = fields.elapsedMs;
    if (fields.retryAfterMs !== undefined) this.retryAfterMs = fields.retryAfterMs;
    if (fields.exceptionCode !== undefined) this.exceptionCode = fields.exceptionCode;
    if (fields.exceptionText !== undefined) this.exceptionText = fields.exceptionText;
    this.url = fields.url;
  }
}

export function makeTileError(message, kind, status, attempts, elapsedMs, retryAfterMs, exceptionCode, exceptionText, url, cause) {
  return new TileError(message, { kind, status, attempts, elapsedMs, retryAfterMs, exceptionCode, exceptionText, url, cause });
}

// A tile for one caller of a (possibly shared) request. The first caller gets the body and headers
// as received; later ones a copy each, so no caller sees another's changes to them.
export function makeTile(response, data, first, attempts, elapsedMs, empty) {
  const headers = first ? response.headers : new Headers(response.headers);
  const body = empty ? new Uint8Array(0) : first ? data : data.slice();
  return { data: body, status: response.status, contentType: headers.get("content-type"), headers, attempts, elapsedMs, empty };
}

// What `TileClient.hostSettings(host)` returns.
export function makeHostSettings(maxConcurrent, halfOpenProbes, deadlineMs, maxOpenMs) {
  return { maxConcurrent, halfOpenProbes, deadlineMs, maxOpenMs };
}

// What an upstream gate (src/web/gate.rs) answers an isolate's admit, and its state.
export function makeGateVerdict(allow, probe, retryAfterMs, reason, state) {
  return { allow, probe, retryAfterMs, reason, state };
}

export function makeGateState(state, openUntil, pausedUntil, retryAfterMs, admitted, denied, ok, failed, opened) {
  return { state, openUntil, pausedUntil, retryAfterMs, admitted, denied, ok, failed, opened };
}

export function makeRetryInfo(attempt, delayMs, reason, status, retryAfterMs) {
  return { attempt, delayMs, reason, status, retryAfterMs };
}

// One host's entry of `stats()`. Values that may be missing come as undefined and read as null;
// the give-ups come as two lists of the same length: kinds (separated by spaces) and counts.
export function makeHostStats(
  requests,
  attempts,
  retries,
  successes,
  aborted,
  coalesced,
  hedges,
  hedgesWon,
  inFlight,
  queued,
  breakerState,
  breakerChangedAt,
  retryTokens,
  pausedUntil,
  rateLimitPerSecond,
  p50,
  p95,
  p99,
  giveUpKinds,
  giveUpCounts,
  corsRefused,
) {
  const giveUps = {};
  giveUpKinds.split(" ").forEach((kind, i) => {
    if (kind) giveUps[kind] = giveUpCounts[i];
  });
  return {
    requests,
    attempts,
    retries,
    successes,
    aborted,
    coalesced,
    hedges,
    hedgesWon,
    inFlight,
    queued,
    giveUps,
    breaker: { state: breakerState, changedAt: breakerChangedAt },
    retryTokens,
    pausedUntil: pausedUntil ?? null,
    rateLimitPerSecond: rateLimitPerSecond ?? null,
    latencyMs: { p50: p50 ?? null, p95: p95 ?? null, p99: p99 ?? null },
    corsRefused,
  };
}

// Adds a host's entry to `stats`: defined, not assigned, so a host named `__proto__` is a key
// like any other.
export function addHostStats(stats, host, hostStats) {
  Object.defineProperty(stats, host, { value: hostStats, enumerable: true, writable: true, configurable: true });
}

// What `onEvent` receives, one function per event type.
export function makeAttemptEvent(host, attempt, probe) {
  return { type: "attempt", host, attempt, probe };
}

export function makeRetryEvent(host, attempt, delayMs, reason, status, retryAfterMs) {
  return { type: "retry", host, attempt, delayMs, reason, status, retryAfterMs };
}

export function makeQueueEvent(host, hold, waitMs) {
  return { type: "queue", host, hold, waitMs };
}

export function makeBreakerEvent(host, state) {
  return { type: "breaker", host, state };
}

export function makePauseEvent(host, until) {
  return { type: "pause", host, until };
}

export function makeHedgeEvent(host, attempt, afterMs) {
  return { type: "hedge", host, attempt, afterMs };
}

export function makeCorsEvent(host) {
  return { type: "cors", host };
}

export function makeGiveUpEvent(host, kind, attempts) {
  return { type: "give-up", host, kind, attempts };
}

// A throwing getter or Proxy trap must not unwind through Rust frames that cannot clean up.
const PLAIN = Object.getPrototypeOf({});

/** What kindOf and readFields say a value is: `ValueKind` in wire.rs. */
export const VALUE_KINDS = Object.freeze({
  absent: 0,
  boolean: 1,
  number: 2,
  string: 3,
  function: 4,
  array: 5,
  abortSignal: 6,
  plainObject: 7,
  // Anything else, including a value that throws when looked at.
  other: 8,
  // A field whose getter threw (readFields only).
  unreadable: 9,
});

export function kindOf(value) {
  try {
    if (value === undefined || value === null) return VALUE_KINDS.absent;
    switch (typeof value) {
      case "boolean":
        return VALUE_KINDS.boolean;
      case "number":
        return VALUE_KINDS.number;
      case "string":
        return VALUE_KINDS.string;
      case "function":
        return VALUE_KINDS.function;
      case "object":
        break;
      default:
        return VALUE_KINDS.other;
    }
    if (Array.isArray(value)) return VALUE_KINDS.array;
    if (typeof AbortSignal !== "undefined" && value instanceof AbortSignal) {
      return typeof value.aborted === "boolean" ? VALUE_KINDS.abortSignal : VALUE_KINDS.other;
    }
    const proto = Object.getPrototypeOf(value);
    return proto === null || proto === PLAIN ? VALUE_KINDS.plainObject : VALUE_KINDS.other;
  } catch {
    return VALUE_KINDS.other;
  }
}

/**
 * A value's own enumerable fields, as three lists of the same length.
 * @typedef {object} Fields
 * @property {string[]} keys
 * @property {number[]} kinds as kindOf gives them; `unreadable` for a field whose getter threw
 * @property {unknown[]} values undefined for an unreadable field
 */

/** The fields of `value`, or null when its keys cannot be read. @returns {Fields | null} */
export function readFields(value) {
  let keys;
  try {
    keys = Object.keys(value);
  } catch {
    return null;
  }
  const kinds = [];
  const values = [];
  for (const key of keys) {
    try {
      const field = value[key];
      kinds.push(kindOf(field));
      values.push(field);
    } catch {
      kinds.push(VALUE_KINDS.unreadable);
      values.push(undefined);
    }
  }
  return { keys, kinds, values };
}
