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
    this.attempts = fields.attempts;
    this.elapsedMs = fields.elapsedMs;
    this.url = fields.url;
  }
}

// The fields every TileError has; the module sets those an error may have (status, retryAfterMs,
// exceptionCode, exceptionText) by name, with setNumber and setText.
export function makeTileError(message, kind, attempts, elapsedMs, url, cause) {
  return new TileError(message, { kind, attempts, elapsedMs, url, cause });
}

// Objects the module builds field by field (a host's stats, a TileError's optional fields): each
// value crosses with its name, which the module holds (src/web/wire.rs, `Named`).
// A value that is not there (undefined) is null.
export function setNumber(object, name, value) {
  object[name] = value ?? null;
}

export function setText(object, name, value) {
  object[name] = value ?? null;
}

export function setFlag(object, name, value) {
  object[name] = value;
}

// A new object as field `name` of `object`.
export function addObject(object, name) {
  const child = {};
  object[name] = child;
  return child;
}

// What a tile kept for later calls holds of its response (src/web/wire.rs, `TileHead`).
export function tileHead(head) {
  return { status: head.status, type: head.type, headers: head.headers };
}

// Whether a response's headers are read-only, so that every caller of its tile may share them:
// those of a response `fetch` made (type "basic" or "cors") are, by the Fetch standard's
// "immutable" guard; a script-made response's (type "default") may be changed.
const readOnlyHeaders = (head) => head.type === "basic" || head.type === "cors";

// A tile for one caller of a (possibly shared) request. The first caller gets the body and headers
// as received; later ones a copy of the bytes each, and of the headers where they could be
// changed, so no caller sees another's changes to them.
export function makeTile(head, data, first, attempts, elapsedMs, empty) {
  const headers = first || readOnlyHeaders(head) ? head.headers : new Headers(head.headers);
  const body = empty ? new Uint8Array(0) : first ? data : data.slice();
  return { data: body, status: head.status, contentType: headers.get("content-type"), headers, attempts, elapsedMs, empty };
}

// What `TileClient.hostSettings(host)` returns.
export function makeHostSettings(maxConcurrent, halfOpenProbes, deadlineMs, maxOpenMs) {
  return { maxConcurrent, halfOpenProbes, deadlineMs, maxOpenMs };
}

export function makeRetryInfo(attempt, delayMs, reason, status, retryAfterMs) {
  return { attempt, delayMs, reason, status, retryAfterMs };
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

export function makePacingEvent(host, perSecond, until) {
  return { type: "pacing", host, perSecond, until };
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
