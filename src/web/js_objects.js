// The shapes of the objects tilefetch hands to JavaScript. Built here in one call each, instead
// of property by property from Rust, so a tile costs one boundary crossing.

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
export function makeTile(response, body, first, attempts, elapsedMs, empty) {
  const headers = first ? response.headers : new Headers(response.headers);
  const data = empty ? new Uint8Array(0) : first ? body : body.slice();
  return { data, status: response.status, contentType: headers.get("content-type"), headers, attempts, elapsedMs, empty };
}

// What `TileClient.hostSettings(host)` returns.
export function makeHostSettings(maxConcurrent, halfOpenProbes, deadlineMs, maxOpenMs) {
  return { maxConcurrent, halfOpenProbes, deadlineMs, maxOpenMs };
}

export function makeRetryInfo(attempt, delayMs, reason, status, retryAfterMs) {
  return { attempt, delayMs, reason, status, retryAfterMs };
}

// Per-host statistics, built from one string and one array of numbers (one boundary crossing,
// not forty per host). `text` holds three lines per host: its name, its breaker state, and its
// give-up kinds separated by spaces. `numbers` holds per host the COUNTS, then changedAt,
// retryTokens, pausedUntil, rateLimitPerSecond, p50, p95, p99 (NaN is null), then one count per
// give-up kind.
const COUNTS = ["requests", "attempts", "retries", "successes", "aborted", "coalesced", "inFlight", "queued"];

export function makeStats(text, numbers) {
  const out = {};
  const lines = text.split("\n");
  let n = 0;
  const next = () => numbers[n++];
  const orNull = () => {
    const v = next();
    return Number.isNaN(v) ? null : v;
  };
  for (let i = 0; i + 2 < lines.length; i += 3) {
    const stats = {};
    for (const name of COUNTS) stats[name] = next();
    const giveUps = {};
    stats.giveUps = giveUps;
    stats.breaker = { state: lines[i + 1], changedAt: next() };
    stats.retryTokens = next();
    stats.pausedUntil = orNull();
    stats.rateLimitPerSecond = orNull();
    stats.latencyMs = { p50: orNull(), p95: orNull(), p99: orNull() };
    for (const kind of lines[i + 2].split(" ")) if (kind) giveUps[kind] = next();
    // Defined, not assigned: a host named `__proto__` is a key like any other.
    Object.defineProperty(out, lines[i], { value: stats, enumerable: true, writable: true, configurable: true });
  }
  return out;
}

// What `onEvent` receives; a, b, c, d, e are the fields of `type`, in the order listed here.
const EVENT_FIELDS = {
  attempt: ["attempt", "probe"],
  retry: ["attempt", "delayMs", "reason", "status", "retryAfterMs"],
  queue: ["hold", "waitMs"],
  breaker: ["state"],
  pause: ["until"],
  "give-up": ["kind", "attempts"],
};

export function makeEvent(type, host, a, b, c, d, e) {
  const event = { type, host };
  const values = [a, b, c, d, e];
  EVENT_FIELDS[type].forEach((name, i) => {
    event[name] = values[i];
  });
  return event;
}
