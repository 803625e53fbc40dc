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
    this.url = fields.url;
  }
}

export function tileErrorClass() {
  return TileError;
}

export function makeTileError(message, kind, status, attempts, elapsedMs, retryAfterMs, url, cause) {
  return new TileError(message, { kind, status, attempts, elapsedMs, retryAfterMs, url, cause });
}

export function makeTile(data, status, contentType, headers, attempts, elapsedMs, empty) {
  return { data, status, contentType, headers, attempts, elapsedMs, empty };
}

export function makeRetryInfo(attempt, delayMs, reason, status, retryAfterMs) {
  return { attempt, delayMs, reason, status, retryAfterMs };
}
