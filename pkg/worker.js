// tilefetch/worker: a tile proxy for Cloudflare Workers (workerd) on the same Rust core.
//
//   import { createTileHandler, UpstreamGate } from "tilefetch/worker";
//   export default { fetch: createTileHandler({ upstream: "https://tiles.example.com/{z}/{x}/{y}.png" }) };
//   export { UpstreamGate }; // optional: bind it as UPSTREAM_GATE to share upstream health
//
// Per request: route → coordinates (400 when invalid) → the cache (fresh: served) → the isolate's
// TileClient (its queue per host; identical calls share one upstream call) → the tile, cached; or
// a stale copy; or 503/429 with Retry-After. The pieces live in ./worker/: config, route (and the SSRF rule),
// cache, upstream (the call, the subrequest cap, the gate), gate (the Durable Object), respond.
import { TileClient, TileError } from "./workerd.js";
import { resolveConfig } from "./worker/config.js";
import { compileRoute, checkTile, compileUpstream, assertUpstreamHosts } from "./worker/route.js";
import { cacheKeyUrl, defaultCache, readEntry, writeEntry } from "./worker/cache.js";
import { callUpstream } from "./worker/upstream.js";
import { followingRedirects, redirectRule } from "./worker/redirects.js";
import { UpstreamGate, gateStubs, gateSettings } from "./worker/gate.js";
import { corsHeaders, preflight, serverTiming, plain, finish } from "./worker/respond.js";
import { guard } from "./worker/guard.js";
import { contextFreeAbort } from "./worker/signal.js";

export { UpstreamGate, TileError };

const isSuccess = (status) => status >= 200 && status <= 299;

/**
 * @param {import("./worker.d.ts").TileHandlerConfig} config
 * @returns {(request: Request, env?: object, ctx?: {waitUntil(p: Promise<unknown>): void}) => Promise<Response>}
 */
export function createTileHandler(config) {
  const cfg = resolveConfig(config);
  const match = compileRoute(cfg.route);
  const subdomains = cfg.client.subdomains;
  const upstream = compileUpstream(cfg.upstream, subdomains, Array.isArray(config.upstream));
  const hosts = [...upstream.hosts];
  // The client is shared by every request of the isolate: its per-host queue (maxConcurrent or
  // the limit a host earns, queueOrder, halfOpenProbes while a breaker is not closed) and its coalescing of identical
  // calls are the proxy's. (The core polls each call only in its own request: src/web/task.rs.)
  const client = new TileClient(cfg.client); // throws TileError (invalid-options) naming the field
  // Attempts follow an upstream's redirects only where the config points (redirects.js).
  const send = followingRedirects((input, init) => fetch(input, init), redirectRule(upstream.origins, cfg.redirects));
  // What each upstream host's calls run with, as the core resolves it (the host's rule over the
  // client's settings over the preset's): no default is restated here.
  const settings = new Map(hosts.map((h) => [h, client.hostSettings(h)]));
  const deadlineMs = Math.max(...hosts.map((h) => settings.get(h).deadlineMs));
  // What each host's gate is told of its settings, and the hosts whose gate failed lately.
  const gateCfg = cfg.gate && gateSettings(cfg.gate, deadlineMs);
  const gateDown = new Map();
  const gateClean = new Map();
  const gateAnswered = new Map();
  const gatePaced = new Map();
  const gateQuoted = new Map();
  // Subrequests other than upstream attempts: cache match + put, the one extra fetch that
  // `maxAgeS` may make past the caches, and the call's one hedge (which goes without an onRetry,
  // so the cap below cannot stop it). With a gate every attempt costs three: admit, the attempt,
  // report.
  const extraFetch = (cfg.client.maxAgeS !== undefined && cfg.client.maxAgeS !== null ? 1 : 0) + (cfg.client.hedge === "off" ? 0 : 1);
  // How long a request waits for its call before it is taken as stranded (guard.js): a call's
  // deadline plus the time it may spend queued behind the isolate's other calls to the host,
  // which the core gives back to the deadline (as much again: a stranded call is a bug's case).
  const guardMs = 2 * deadlineMs + (cfg.gate ? cfg.gate.timeoutMs : 0) + 1000;

  /** TTL in seconds for an answer with this status, or null: not cached. */
  const ttlFor = (status) => cfg.cacheTtlByStatus[status] ?? (isSuccess(status) ? cfg.cacheTtlS : null);

  /**
   * The client's stats and the epoch time to judge them at, read in that order: the stats map
   * the core's clock (`performance.now()`) to the epoch by reading both clocks in turn, and a
   * `now` a clock tick older than that reading stretches a pause that has just begun past its
   * whole seconds (a 30 s Retry-After passed on as 31).
   */
  function statsNow() {
    const stats = client.stats();
    return { stats, now: Date.now() };
  }

  /** How long map clients should wait: the call's own hint, the client's pause or open breaker. */
  function retryAfterS(out) {
    const { stats, now } = statsNow();
    let hostWait = Infinity; // mirrors: the soonest any host is usable again
    for (const h of hosts) {
      const s = stats[h];
      let wait = 0;
      if (s?.pausedUntil) wait = Math.max(wait, s.pausedUntil - now);
      if (s?.breaker?.state === "open") {
        wait = Math.max(wait, s.breaker.changedAt + settings.get(h).maxOpenMs - now);
      }
      hostWait = Math.min(hostWait, wait);
    }
    const ms = Math.max(out.retryAfterMs ?? 0, hostWait === Infinity ? 0 : hostWait);
    return Math.min(3600, Math.max(1, Math.ceil(ms / 1000)));
  }

  /**
   * Whether every upstream host is known to be down now: its breaker open (the isolate's own, or
   * the gate's refusals, which reach the core as 503s with its wait) or paused. While it is, no
   * call goes upstream; a half-open breaker lets its probe go. A pause a call can wait out that
   * is a quota's (the gate refused for its quota or rate, which it then keeps to itself: see
   * gated-fetch.js; or the host stated nothing left until about then) is not down: the host
   * serves after it.
   */
  function knownDown() {
    const { stats, now } = statsNow();
    return hosts.every((h) => {
      const s = stats[h];
      if (s === undefined) return false;
      const paused = (s.pausedUntil ?? 0) > now;
      const quota = s.statedLimit !== null && s.statedLimit.remaining < 1 && s.pausedUntil <= s.statedLimit.until + 1000;
      const waitable = paused && (quota || gatePaced.get(h) === true) && s.pausedUntil - now < settings.get(h).deadlineMs;
      return s.breaker.state === "open" || (paused && !waitable);
    });
  }

  // Revalidations of stale tiles in flight, by cache key: one per tile, whatever the requests.
  const revalidating = new Map();

  /** One upstream call for this request (joined with identical ones in flight by the client). */
  function upstreamCall(key, urls, env, ctx, cache, referer, onFailure) {
    const waitUntil = (p) => (ctx?.waitUntil ? ctx.waitUntil(p.catch(() => {})) : p.catch(() => {}));
    // Stubs per call: a Durable Object stub belongs to the request that made it.
    const stubFor = gateStubs(env, cfg.gate);
    const gate = stubFor && {
      stubFor,
      cfg: gateCfg,
      timeoutMs: cfg.gate.timeoutMs,
      down: gateDown,
      clean: gateClean,
      answered: gateAnswered,
      paced: gatePaced,
      quoted: gateQuoted,
    };
    const perAttempt = gate ? 3 : 1;
    const reserved = (cache ? 2 : 0) + extraFetch * perAttempt;
    const cap = Math.max(1, Math.floor((cfg.maxSubrequests - reserved) / perAttempt));
    const control = contextFreeAbort();
    const call = callUpstream({ client, urls, cap, control, gate, waitUntil, referer, clientHeaders: cfg.client.headers, onFailure, send });
    call.abort = control.abort;
    // The call that sent the request caches its answer; those it served were coalesced onto it.
    waitUntil(
      call.then(async (out) => {
        const ttl = out.kind === "fail" || out.coalesced ? null : ttlFor(out.status);
        if (cache && ttl) {
          const keep = isSuccess(out.status) ? ttl + cfg.staleIfErrorS : ttl;
          const data = out.kind === "tile" ? out.data : new Uint8Array(0);
          await writeEntry(cache, key, { status: out.status, data, contentType: out.contentType ?? null }, keep, Date.now());
        }
      }),
    );
    return call;
  }

  return async function handleTileRequest(request, env, ctx) {
    const t0 = performance.now();
    const common = { ...corsHeaders(cfg.cors, request.headers.get("origin")) };
    const respond = (r, timing = []) => finish(request, r, { ...common, "server-timing": serverTiming([...timing, ["total", performance.now() - t0]]) });
    try {
      if (request.method === "OPTIONS") return cfg.cors ? preflight(cfg.cors, request) : respond(plain(405, "method not allowed", { allow: "GET, HEAD" }));
      if (request.method !== "GET" && request.method !== "HEAD") return respond(plain(405, "method not allowed: GET or HEAD", { allow: "GET, HEAD, OPTIONS" }));
      const parts = match(new URL(request.url).pathname);
      if (!parts) return respond(plain(404, `not a tile path; expected ${cfg.route}`));
      const tile = checkTile(parts, cfg.maxZoom);
      if (tile.error) return respond(plain(400, `invalid tile: ${tile.error}`));

      const urls = upstream.build(tile.z, tile.x, tile.y);
      assertUpstreamHosts(urls, upstream.hosts, subdomains);
      const key = cacheKeyUrl(upstream.keyUrl(tile.z, tile.x, tile.y));
      const cache = defaultCache();
      const timing = [];
      let stale = null;
      if (cache) {
        const t = performance.now();
        const entry = await readEntry(cache, key);
        const ageS = entry ? Math.max(0, (Date.now() - entry.storedAt) / 1000) : 0;
        const ttl = entry ? ttlFor(entry.status) : null;
        timing.push(["cache", performance.now() - t, !entry ? "miss" : ttl !== null && ageS < ttl ? "hit" : "expired"]);
        if (entry && ttl !== null && ageS < ttl) return respond(fromEntry(entry, "hit", ageS, ttl - ageS), timing);
        if (entry && isSuccess(entry.status) && ageS < (ttl ?? 0) + cfg.staleIfErrorS) stale = { entry, ageS };
      }

      const serveStale = (why) => {
        const r = fromEntry(stale.entry, "stale", stale.ageS, null);
        Object.assign(r.headers, { "x-tilefetch-stale": why, warning: '111 - "Revalidation Failed"' });
        return respond(r, timing);
      };
      // Known down (an open breaker, a pause): nothing goes upstream; the stale copy, or 503 at once.
      if (knownDown()) {
        if (stale) return serveStale("down");
        return respond(
          plain(503, "upstream known down (its breaker is open or it asked to pause)", {
            "retry-after": String(retryAfterS({})),
            "x-tilefetch-cache": cache ? "miss" : "off",
            "x-tilefetch-attempts": "0",
          }),
          timing,
        );
      }
      // A stale copy whose revalidation is under way (another request's): that copy, at once.
      if (stale && revalidating.has(key)) return serveStale("revalidating");

      // The map page's Referer goes upstream (tile policies ask for it); the User-Agent is the
      // library's own (the core's default on workerd), not the visitor's browser. With a stale
      // copy, the first failed attempt serves it, and the call goes on in the background
      // (ctx.waitUntil, upstreamCall), bounded by its deadline, caching what it gets.
      let failedOnce;
      const failed = stale ? new Promise((resolve) => (failedOnce = resolve)) : null;
      const call = upstreamCall(key, urls, env, ctx, cache, request.headers.get("referer"), failedOnce);
      if (stale) {
        revalidating.set(key, call);
        const forget = () => revalidating.get(key) === call && revalidating.delete(key);
        call.then(forget, forget);
      }
      const stranded = () => {
        call.abort(new Error("the upstream call did not settle in time"));
        return {
          kind: "fail",
          status: 503,
          errorKind: "stranded",
          retryAfterMs: 1000,
          message: "upstream call did not settle in time",
          attempts: 0,
          timing: [],
        };
      };
      const t = performance.now();
      const STALE = Symbol("stale");
      const out = await (failed ? Promise.race([guard(call, guardMs, stranded), failed.then(() => STALE)]) : guard(call, guardMs, stranded));
      if (out === STALE) {
        timing.push(["upstream", performance.now() - t, "failed, revalidating"]);
        return serveStale("1");
      }
      timing.push(...(out.coalesced ? [["upstream", performance.now() - t, "coalesced"]] : out.timing));
      const meta = { "x-tilefetch-attempts": String(out.coalesced ? 0 : out.attempts), ...(out.coalesced ? { "x-tilefetch-coalesced": "1" } : {}) };

      if (out.kind === "tile" || out.kind === "answer") {
        const ttl = ttlFor(out.status);
        const entry = { status: out.status, data: out.data ?? new Uint8Array(0), contentType: out.contentType ?? null };
        const r = out.kind === "tile" ? fromEntry(entry, "miss", 0, cache ? ttl : null) : answer(out, cache ? ttl : null, "miss");
        Object.assign(r.headers, meta);
        return respond(r, timing);
      }
      if (stale) {
        const r = fromEntry(stale.entry, "stale", stale.ageS, null);
        Object.assign(r.headers, meta, { "x-tilefetch-stale": "1", warning: '111 - "Revalidation Failed"' });
        return respond(r, timing);
      }
      const retry = out.status === 500 ? {} : { "retry-after": String(retryAfterS(out)) };
      return respond(plain(out.status, out.message, { ...retry, ...meta, "x-tilefetch-cache": cache ? "miss" : "off" }), timing);
    } catch (error) {
      // Never a stack or an upstream URL in the answer: the message of our own errors only.
      console.error("tilefetch/worker:", error);
      return respond(plain(500, `tile proxy error: ${error instanceof TileError ? error.kind : "internal"}`));
    }
  };
}

/** A tile (or a cached 404/410) as a response; `freshS` null means "do not let clients keep it". */
function fromEntry(entry, disposition, ageS, freshS) {
  if (!isSuccess(entry.status)) return answer({ status: entry.status, message: `upstream answered ${entry.status}` }, freshS, disposition, ageS);
  const headers = {
    "content-type": entry.contentType ?? "application/octet-stream",
    "cache-control": freshS ? `public, max-age=${Math.floor(freshS)}` : "no-cache",
    "x-tilefetch-cache": disposition,
    "x-tilefetch-attempts": "0",
  };
  if (ageS > 0) headers.age = String(Math.floor(ageS));
  return { status: entry.status, body: entry.data, headers };
}

/** An authoritative upstream answer without a tile (404, 410, 403 …). */
function answer(out, freshS, disposition, ageS = 0) {
  const r = plain(out.status, out.message, { "x-tilefetch-cache": disposition, "x-tilefetch-attempts": "0" });
  if (freshS) r.headers["cache-control"] = `public, max-age=${Math.floor(freshS)}`;
  if (ageS > 0) r.headers.age = String(Math.floor(ageS));
  return r;
}
