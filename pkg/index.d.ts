// The options are declared once, in the core's registry (src/options/registry.rs); the build
// writes their interface into gen/options.d.ts.
import type { FetchTileOptions, HostOptions, HostSettings, TileClientConfig } from "./gen/options.js";
export type { FetchTileOptions, HostOptions, HostSettings, TileClientConfig };

/**
 * tilefetch: load one map tile reliably.
 *
 * Retries transient failures (network errors, timeouts, 408/425/429/5xx, error bodies served
 * with 200) with capped, jittered exponential backoff, within a wall-clock deadline; honours
 * Retry-After; cancels with an AbortSignal. Rejects with a {@link TileError}.
 *
 * Runs on one default {@link TileClient}: its per-host limits (concurrency, breaker, retry
 * budget, rate-limit pause) apply to every caller in the page, worker or isolate.
 *
 * `url` is a URL, an array of mirror URLs (retries rotate over them, skipping mirrors whose
 * breaker is open), or a template with `{s}` expanded over `subdomains`.
 */
export function fetchTile(url: string | string[], options?: FetchTileOptions): Promise<Tile>;

/** Per-host statistics of the default client (the one behind {@link fetchTile}). */
export function stats(): Record<string, HostStats>;

/**
 * Shared knowledge per host for the calls made through it: a concurrency queue, a circuit
 * breaker, a retry budget, a rate-limit pause and a learned request rate, coalescing of
 * identical concurrent calls, statistics and events.
 */
export class TileClient {
  /**
   * Throws a {@link TileError} of kind "invalid-options" naming the field for a bad config. In a
   * browser, a client made before the module has loaded (at import) checks its config once it has:
   * then each of its calls rejects with that error instead.
   */
  constructor(config?: TileClientConfig);
  /** As the top-level {@link fetchTile}; per-call options override the client's and the host's. */
  fetchTile(url: string | string[], options?: FetchTileOptions): Promise<Tile>;
  /** Per host (`host[:port]`, no credentials); JSON-serialisable. */
  stats(): Record<string, HostStats>;
  /**
   * The settings calls to `host` (`host[:port]`) run with: its rule in `hosts` over the client's
   * settings over the preset's defaults. `null` in a browser before the module has loaded.
   */
  hostSettings(host: string): ResolvedHostSettings | null;
  /** Frees the client's wasm memory; the client must not be used afterwards. */
  free(): void;
}

export type TileEvent =
  | { type: "attempt"; host: string; attempt: number; probe: boolean }
  | { type: "retry"; host: string; attempt: number; delayMs: number; reason: TileErrorKind; status?: number; retryAfterMs?: number }
  | { type: "queue"; host: string; hold: "slot" | "pause" | "breaker" | "rate" | "quota"; waitMs: number }
  | { type: "breaker"; host: string; state: "closed" | "open" | "half-open" }
  | { type: "pause"; host: string; until: number }
  /**
   * The rate limit the host states (`RateLimit`, `X-RateLimit-*`) now paces its requests at
   * `perSecond` until `until` (epoch ms); said when pacing starts.
   */
  | { type: "pacing"; host: string; perSecond: number; until: number }
  | { type: "hedge"; host: string; attempt: number; afterMs: number }
  /** The host was found to answer without CORS headers (once, until it sends them again). */
  | { type: "cors"; host: string }
  | { type: "give-up"; host: string; kind: TileErrorKind; attempts: number };

export interface HostStats {
  /** Calls (coalesced ones included). */
  requests: number;
  attempts: number;
  retries: number;
  successes: number;
  /** Give-ups by error kind. */
  giveUps: Partial<Record<TileErrorKind, number>>;
  aborted: number;
  /** Calls that shared another call's request. */
  coalesced: number;
  /** Calls served from the client's recently delivered tiles (`memoryCacheBytes`), with no request. */
  fromMemory: number;
  /** Hedges sent to this host (counted in `attempts` too). */
  hedges: number;
  /** Hedges whose tile came before the attempt they hedged. */
  hedgesWon: number;
  inFlight: number;
  queued: number;
  /** How many attempts may be in flight at once now: `maxConcurrent` when set, else the limit the host's answers have earned (see docs/tile-client.md). */
  maxInFlight: number;
  breaker: { state: "closed" | "open" | "half-open"; changedAt: number };
  retryTokens: number;
  /** Epoch ms, or null when not paused. */
  pausedUntil: number | null;
  /** The learned request rate after a 429, or null. */
  rateLimitPerSecond: number | null;
  /** Of successful calls (bucket upper bounds, ≤ 19 % high); null before the first. */
  latencyMs: { p50: number | null; p95: number | null; p99: number | null };
  /**
   * The host's last answer came without CORS headers (no `Access-Control-Allow-Origin`), so a
   * page or worker could not read it: its calls end as kind "cors" (see `TileErrorKind`).
   */
  corsRefused: boolean;
  /**
   * The rate limit the host last stated (`RateLimit` and `RateLimit-Policy`, or the legacy
   * `X-RateLimit-*` fields), while it is in force; null when it states none (or a page may not
   * read it: see the README's retry rules).
   */
  statedLimit: StatedLimit | null;
}

/** A host's stated rate limit, as `stats()` shows it. */
export interface StatedLimit {
  /** The `RateLimit-Policy` name it reports on; null for the legacy fields. */
  policy: string | null;
  /** The policy's quota (`q`) and window in seconds (`w`), when the host sent the policy. */
  quota: number | null;
  windowS: number | null;
  /** The quota the host said remains (`r`). */
  remaining: number;
  /** Seconds it said until more quota comes (`t`), or null. */
  resetS: number | null;
  /** The rate (requests per second) the statement paces the host at, or null when it does not. */
  pacedPerSecond: number | null;
  /** Epoch ms when the statement lapses (the next answer restates it). */
  until: number;
}

/** A delivered tile. */
export interface Tile {
  /** The whole body. Empty when `empty` is true. */
  data: Uint8Array;
  status: number;
  /** The `Content-Type` header, or null when there is none. */
  contentType: string | null;
  /**
   * The response headers: read-only where the platform's `fetch` made them so (shared then by
   * every caller of a coalesced or remembered tile), otherwise a copy per caller.
   */
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


/** What {@link TileClient.hostSettings} returns: every value resolved, none left to a default. */
export interface ResolvedHostSettings {
  maxConcurrent: number;
  halfOpenProbes: number;
  deadlineMs: number;
  maxOpenMs: number;
}

export type TileErrorKind =
  | "http"
  | "network"
  /**
   * The server answered a page's or worker's cross-origin request without CORS headers, so the
   * browser withheld the tile (found by one `no-cors` request; not retried, not held against the
   * host). The ways out: the server's `Access-Control-Allow-Origin`, the OpenLayers or Leaflet
   * adapter (which then load such a server's tiles as images), or `tilefetch/worker`.
   */
  | "cors"
  /** The body is larger than `maxBytes` (declared, and refused unread, or cut while read). Not retried. */
  | "too-large"
  /** A call with `range` got the whole resource, over `maxBytes`: the server does not serve byte ranges. Not retried. */
  | "range-unsupported"
  | "timeout"
  | "deadline"
  | "aborted"
  | "rate-limited"
  | "circuit-open"
  | "service-exception"
  | "invalid-response"
  | "invalid-options";

/** The `range` option: `length` bytes from `offset`, whole numbers, `length` at least 1 and at most `maxBytes`. */
export interface ByteRange {
  offset: number;
  length: number;
}

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
  /**
   * When the body was an OGC exception report (WMS `ServiceException`, OWS `Exception`), on any
   * status and for any kind ("service-exception", "http", and the `cause` of "deadline"): its
   * `code`/`exceptionCode`, e.g. "LayerNotDefined", "TileOutOfRange", "NoApplicableCode".
   */
  exceptionCode?: string;
  /** The report's text, whitespace collapsed, URLs and secret parameters redacted, at most 200 characters. */
  exceptionText?: string;
  url: string;
  /** "deadline"/"rate-limited"/"circuit-open": the last attempt's TileError; "network": the platform's error; "aborted": the signal's reason. */
  cause?: unknown;
}
