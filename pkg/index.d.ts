/**
 * tilefetch: load one map tile reliably.
 *
 * Retries transient failures (network errors, timeouts, 408/425/429/5xx, error bodies served
 * with 200) with capped, jittered exponential backoff, within a wall-clock deadline; honours
 * Retry-After; cancels with an AbortSignal. Rejects with a {@link TileError}.
 */
export function fetchTile(url: string, options?: FetchTileOptions): Promise<Tile>;

/** A delivered tile. */
export interface Tile {
  /** The whole body. Empty when `empty` is true. */
  data: Uint8Array;
  status: number;
  /** The `Content-Type` header, or null when there is none. */
  contentType: string | null;
  headers: Headers;
  /** How many requests were sent, 1 … n. */
  attempts: number;
  /** Wall time from the call to the tile, in milliseconds. */
  elapsedMs: number;
  /** True when the status is one of `emptyOn`: there is no tile here (e.g. 204). */
  empty: boolean;
}

/** What `onRetry` is told before each backoff sleep. */
export interface RetryInfo {
  /** The attempt that just failed (1 for the first). */
  attempt: number;
  /** How long tilefetch will now wait, in milliseconds. */
  delayMs: number;
  /** The failed attempt's error kind. */
  reason: TileErrorKind;
  status?: number;
  /** The server's Retry-After, in milliseconds, when it sent one. */
  retryAfterMs?: number;
}

export interface FetchTileOptions {
  /**
   * Defaults for the timing fields. `"interactive"`: baseDelayMs 200, maxDelayMs 2000,
   * attemptTimeoutMs 4000, deadlineMs 6000. `"batch"`: 500, 30000, 60000, 180000.
   * @default "interactive"
   */
  preset?: "interactive" | "batch";
  /** The first retry's backoff ceiling; it doubles per retry up to `maxDelayMs`. @default 200 (batch: 500) */
  baseDelayMs?: number;
  /** The cap of every backoff delay. @default 2000 (batch: 30000) */
  maxDelayMs?: number;
  /** One attempt, body included, is aborted after this. @default 4000 (batch: 60000) */
  attemptTimeoutMs?: number;
  /** Bounds the whole call: attempts and sleeps. @default 6000 (batch: 180000) */
  deadlineMs?: number;
  /**
   * How the exponential ceiling c = min(maxDelayMs, baseDelayMs·2^(n−1)) is randomised:
   * `"full"` U(0, c); `"equal"` c/2 + U(0, c/2); `"decorrelated"` min(maxDelayMs, U(baseDelayMs,
   * 3·previous)); `"none"` c; `"additive"` c + U(0, jitterMs).
   * @default "full"
   */
  jitter?: "full" | "equal" | "decorrelated" | "none" | "additive";
  /** The random addend of `jitter: "additive"`. @default 100 */
  jitterMs?: number;
  /** A longer Retry-After is clamped to this before it is used as the delay's floor. @default 60000 */
  retryAfterMaxMs?: number;
  /** Statuses that are retried. @default [408, 425, 429, 500, 502, 503, 504] */
  retryOn?: number[];
  /** Statuses that mean "no tile here": the call resolves with `empty: true`. @default [204] */
  emptyOn?: number[];
  /**
   * Sent as the Accept header; a response whose Content-Type contradicts it is retried.
   * @default undefined (no header, no check)
   */
  accept?: string;
  /** Extra request headers. @default undefined */
  headers?: HeadersInit;
  /** @default "same-origin" (the platform's default; not sent, so workerd accepts the request) */
  credentials?: RequestCredentials;
  /** @default "cors" (the platform's default; not sent) */
  mode?: "cors" | "no-cors" | "same-origin";
  /** @default the platform's (not sent) */
  referrerPolicy?: ReferrerPolicy;
  /** @default "default" (the platform's default; not sent) */
  cache?: RequestCache;
  /** Aborts the request in flight and any backoff sleep at once; the call rejects with kind "aborted". @default undefined */
  signal?: AbortSignal | null;
  /** Called before each backoff sleep. Exceptions it throws are ignored. @default undefined */
  onRetry?: (info: RetryInfo) => void;
}

export type TileErrorKind =
  | "http"
  | "network"
  | "timeout"
  | "deadline"
  | "aborted"
  | "rate-limited"
  | "service-exception"
  | "invalid-response"
  | "invalid-options";

/** Why a tile was not delivered. `url` and `message` have secret query parameters replaced by `***`. */
export class TileError extends Error {
  name: "TileError";
  kind: TileErrorKind;
  /** The HTTP status, when a response decided the outcome. */
  status?: number;
  /** Requests sent (0 when the call was rejected before sending, e.g. invalid options). */
  attempts: number;
  elapsedMs: number;
  /** The server's Retry-After in milliseconds (kind "rate-limited"). */
  retryAfterMs?: number;
  url: string;
  /** "deadline"/"rate-limited": the last attempt's TileError; "network": the platform's error; "aborted": the signal's reason. */
  cause?: unknown;
}
