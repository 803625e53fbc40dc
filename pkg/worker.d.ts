/**
 * tilefetch/worker: a map tile proxy for Cloudflare Workers (workerd), on the same Rust core as
 * `fetchTile`. It retries, caches (Cache API) and protects a slow or rate-limited upstream for
 * every map user behind it.
 *
 * ```js
 * import { createTileHandler, UpstreamGate } from "tilefetch/worker";
 * export default { fetch: createTileHandler({ upstream: "https://tiles.example.com/{z}/{x}/{y}.png" }) };
 * export { UpstreamGate }; // optional, bound as UPSTREAM_GATE: one view of the upstream's health for all isolates
 * ```
 *
 * Needs compatibility date 2024-10-14 or later (or the `handle_cross_request_promise_resolution`
 * flag): requests wait for one another's upstream calls, and only then does workerd continue a
 * waiting request in its own context.
 */
import type { TileClientConfig } from "./index.d.ts";

/** The same class as `import { TileError } from "tilefetch"` in workerd. */
export declare const TileError: typeof import("./index.d.ts").TileError;
export type TileError = import("./index.d.ts").TileError;

/**
 * Builds the Worker's `fetch` handler. Validates `config` at once: a bad or unknown field throws a
 * {@link TileError} of kind "invalid-options" whose message names the field (e.g. `cacheTtlS`,
 * `upstream[1]`, `breaker.openMs`).
 */
export function createTileHandler(config: TileHandlerConfig): TileHandler;

/** `(request, env, ctx) => Response`: use it as `export default { fetch: handler }`, or call it from your own. */
export type TileHandler = (request: Request, env?: object, ctx?: { waitUntil(promise: Promise<unknown>): void }) => Promise<Response>;

/**
 * Every {@link TileClientConfig} field (preset, deadlineMs, attemptTimeoutMs, baseDelayMs,
 * maxDelayMs, jitter, retryOn, accept, headers, subdomains, maxConcurrent, queueOrder, breaker,
 * retryBudget, learnRate, hosts, onEvent …) applies to the upstream calls, with the same defaults.
 */
export interface TileHandlerConfig extends TileClientConfig {
  /**
   * The upstream URL template, or several (mirrors: attempt n goes to mirror n mod count). `{z}`,
   * `{x}`, `{y}` (or `{-y}`, TMS) are replaced by the tile's coordinates and `{s}` by one of
   * `subdomains`. The host is fixed by the template: `{z}/{x}/{y}` may not appear in it, and nothing
   * from the incoming request (path, query, headers) ever reaches the upstream URL except the three
   * validated integers. Secrets may sit in the query (`?key=…`); they are left out of cache keys.
   * Required.
   */
  upstream: string | string[];
  /**
   * The incoming path, with `{z}`, `{x}` and `{y}` once each, each one path segment of ASCII
   * digits. A path that does not match is a 404; a match with bad coordinates a 400.
   * @default "/tiles/{z}/{x}/{y}.png"
   */
  route?: string;
  /** The deepest zoom served; deeper is a 400. At most 30. @default 22 */
  maxZoom?: number;
  /**
   * How long a tile (2xx) is fresh in the cache, in seconds: served without asking the upstream,
   * and sent to clients with `Cache-Control: public, max-age=<what is left>`. 0: not cached.
   * @default 86400
   */
  cacheTtlS?: number;
  /**
   * A TTL per status, in seconds, merged over the default: 2xx (not 206), 404 and 410 only. A 404
   * or 410 is cached for its own TTL and never served stale; `{"404": 0}` stops caching 404s.
   * Errors (5xx, 429, exceptions, HTML or truncated bodies) are never cached.
   * @default {"404": 60}
   */
  cacheTtlByStatus?: Record<string, number>;
  /**
   * How long after its TTL a tile is kept as a fallback, in seconds: when the upstream fails, a
   * tile in this window is served with `x-tilefetch-stale: 1` and `Warning: 111`.
   * @default 604800
   */
  staleIfErrorS?: number;
  /**
   * Subrequests one incoming request may make (Workers allow 50 on Free, 1000 on Paid). Upstream
   * attempts per request ≤ maxSubrequests − 2 (cache match and put) − 2 more when the gate is bound
   * (admit, report) − 1 more with `maxAgeS` − 1 for the call's hedge (unless `hedge: "off"`); the
   * call is aborted before it would exceed that. 5 … 1000.
   * @default 40
   */
  maxSubrequests?: number;
  /**
   * CORS: `"*"` (any origin), one origin or a list (the request's `Origin` is echoed when listed,
   * with `Vary: Origin`), or `false` (no CORS headers, OPTIONS is a 405). Exposes Retry-After,
   * Server-Timing, Age, Warning and the x-tilefetch-* headers; sets Timing-Allow-Origin.
   * @default "*"
   */
  cors?: false | "*" | string | string[];
  /**
   * The shared {@link UpstreamGate}, used when its binding is in the environment; `false` never uses it.
   * @default { binding: "UPSTREAM_GATE", failureThreshold: 5, openMs: 2000, maxOpenMs: 30000, ratePerSecond: null, timeoutMs: 1000 }
   */
  gate?: false | GateConfig;
  /**
   * Origins besides the upstream templates' own that an upstream's redirect may lead to (a
   * regional endpoint, a CDN). A redirect is followed only to those, at most 3 hops, and never to
   * a loopback, private or link-local address unless an upstream is at one; any other is an
   * upstream error (not followed, not cached).
   * @default []
   */
  redirects?: string[];
}

export interface GateConfig {
  /** The Durable Object namespace binding's name in `env`. @default "UPSTREAM_GATE" */
  binding?: string;
  /** A prefix of the objects' names: one object per upstream host, named `host` or `name/host`. @default undefined */
  name?: string;
  /** Consecutive failed upstream attempts, from any isolate, that open the shared breaker (each attempt is admitted by the gate and reported to it). @default 5 */
  failureThreshold?: number;
  /** How long the shared breaker stays open before it lets one probe through. @default 2000 */
  openMs?: number;
  /** The open time grows ×1.5 per failed probe, up to this. @default 30000 */
  maxOpenMs?: number;
  /** A shared token bucket: upstream attempts per second for all isolates together; null: no limit. @default null */
  ratePerSecond?: number | null;
  /** The bucket's size. @default ceil(ratePerSecond), at least 1 */
  burst?: number;
  /** A gate call that takes longer is given up and the attempt goes on without it (fail open); that host's gate is then not asked for 5 s. @default 1000 */
  timeoutMs?: number;
}

/**
 * The Durable Object class that holds one upstream's shared state: a breaker over call outcomes,
 * a pause (the upstream's Retry-After) and an optional token bucket. Export it from the Worker and
 * bind it (wrangler.toml `[[durable_objects.bindings]] name = "UPSTREAM_GATE", class_name =
 * "UpstreamGate"`); without the binding every isolate relies on its own TileClient only. Its state
 * lives in memory: an evicted object starts closed.
 *
 * RPC (POST, JSON): `{op: "admit", cfg}` → `{allow, probe, retryAfterMs, reason, state}`;
 * `{op: "report", ok: true | false | null, probe, retryAfterMs?, cfg}` → `{state}`;
 * `{op: "state"}` → a snapshot with counters.
 */
export class UpstreamGate {
  constructor(state: unknown, env: unknown);
  fetch(request: Request): Promise<Response>;
}
