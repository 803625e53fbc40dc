// tilefetch/worker: a tile proxy for Cloudflare Workers (workerd) on the same Rust core.
//
//   import { createTileHandler, UpstreamGate } from "tilefetch/worker";
//   export default { fetch: createTileHandler({ upstream: "https://tiles.example.com/{z}/{x}/{y}.png" }) };
//   export { UpstreamGate }; // optional: bind it as UPSTREAM_GATE to share upstream health
//
// Per request: route → coordinates (400 when invalid) → the cache (fresh: served) → one upstream
// call per tile at a time in the isolate (others wait for it) → the tile, cached; or a stale copy;
// or 503/429 with Retry-After. The pieces live in ./worker/: config, route (and the SSRF rule),
// cache, upstream (the call, the subrequest cap, the gate), gate (the Durable Object), respond.
import { TileClient, TileError } from "./workerd.js";
import { resolveConfig } from "./worker/config.js";
import { compileRoute, checkTile, compileUpstream, assertUpstreamHosts } from "./worker/route.js";
import { cacheKeyUrl, defaultCache, readEntry, writeEntry } from "./worker/cache.js";
import { callUpstream } from "./worker/upstream.js";
import { UpstreamGate, gateStubs, gateSettings } from "./worker/gate.js";
import { corsHeaders, preflight, serverTiming, plain, finish } from "./worker/respond.js";
import { guard } from "./worker/guard.js";
import { createLimiter } from "./worker/limiter.js";
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
  // What each upstream host's calls run with, as the core resolves it (the host's rule over the
  // client's settings over the preset's): no default is restated here.
  const validated = new TileClient(cfg.client); // throws TileError (invalid-options) naming the field
  const settings = new Map(hosts.map((h) => [h, validated.hostSettings(h)]));
  validated.free();
  // The client is shared by every request of the isolate. The queue is here (worker/limiter.js):
  // one limit per handler, the sum over the upstream's hosts, which narrows to the configured
  // halfOpenProbes while a breaker is not closed, so that a failing upstream still sees one probe
  // per half-open, after those already in flight when it tripped; the client lets every call in
  // it take a probe place (halfOpenProbes ≥ the limiter's limit: nobody waits for a probe).
  // Coalescing is here too (`flights`), because it covers the cache lookup as well as the fetch.
  // (The core itself polls each call only in its own request: see src/web/task.rs.)
  const fullLimit = hosts.reduce((n, h) => n + settings.get(h).maxConcurrent, 0);
  const probeLimit = Math.max(...hosts.map((h) => settings.get(h).halfOpenProbes));
  const limiter = createLimiter(fullLimit, cfg.client.queueOrder ?? "fifo");
  const breakerState = new Map(); // host → the last "breaker" event's state
  const userOnEvent = cfg.client.onEvent;
  const onEvent = (e) => {
    if (e?.type === "breaker") {
      breakerState.set(e.host, e.state);
      limiter.setLimit([...breakerState.values()].every((s) => s === "closed") ? fullLimit : probeLimit);
    }
    if (typeof userOnEvent === "function") userOnEvent(e);
  };
  const client = new TileClient({ ...forWorkerd(cfg.client, Math.min(1000, fullLimit)), onEvent });
  const deadlineMs = Math.max(...hosts.map((h) => settings.get(h).deadlineMs));
  // What each host's gate is told of its settings, and the hosts whose gate failed lately.
  const gateCfg = cfg.gate && gateSettings(cfg.gate, deadlineMs);
  const gateDown = new Map();
  const gateClean = new Map();
  // Subrequests other than upstream attempts: cache match + put, the one extra fetch that
  // `maxAgeS` may make past the caches, and the call's one hedge (which goes without an onRetry,
  // so the cap below cannot stop it). With a gate every attempt costs three: admit, the attempt,
  // report.
  const extraFetch = (cfg.client.maxAgeS !== undefined && cfg.client.maxAgeS !== null ? 1 : 0) + (cfg.client.hedge === "off" ? 0 : 1);
  const flights = new Map(); // cache key → Promise<Outcome>: one upstream call per tile at a time
  const guardMs = deadlineMs + (cfg.gate ? cfg.gate.timeoutMs : 0) + 1000;

  /** TTL in seconds for an answer with this status, or null: not cached. */
  const ttlFor = (status) => cfg.cacheTtlByStatus[status] ?? (isSuccess(status) ? cfg.cacheTtlS : null);

  /** How long map clients should wait: the call's own hint, the client's pause or open breaker. */
  function retryAfterS(out) {
    const now = Date.now();
    const stats = client.stats();
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

  function startFlight(key, urls, env, ctx, cache, referer) {
    const waitUntil = (p) => (ctx?.waitUntil ? ctx.waitUntil(p.catch(() => {})) : p.catch(() => {}));
    // Stubs per flight: a Durable Object stub belongs to the request that made it.
    const stubFor = gateStubs(env, cfg.gate);
    const gate = stubFor && { stubFor, cfg: gateCfg, timeoutMs: cfg.gate.timeoutMs, down: gateDown, clean: gateClean };
    const perAttempt = gate ? 3 : 1;
    const reserved = (cache ? 2 : 0) + extraFetch * perAttempt;
    const cap = Math.max(1, Math.floor((cfg.maxSubrequests - reserved) / perAttempt));
    const control = contextFreeAbort();
    const flight = callUpstream({
      client,
      urls,
      cap,
      control,
      limiter,
      deadlineMs,
      gate,
      waitUntil,
      referer,
      clientHeaders: cfg.client.headers,
    });
    flight.abort = control.abort;
    flights.set(key, flight);
    const settled = flight.then(
      async (out) => {
        const ttl = out.kind === "fail" ? null : ttlFor(out.status);
        if (cache && ttl) {
          const keep = isSuccess(out.status) ? ttl + cfg.staleIfErrorS : ttl;
          const data = out.kind === "tile" ? out.data : new Uint8Array(0);
          await writeEntry(cache, key, { status: out.status, data, contentType: out.contentType ?? null }, keep, Date.now());
        }
      },
      () => {},
    );
    // Until the cache has it, later requests join the finished flight instead of refetching.
    const done = settled.finally(() => flights.get(key) === flight && flights.delete(key));
    waitUntil(done);
    return flight;
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

      let flight = flights.get(key);
      const coalesced = flight !== undefined;
      // The map page's Referer goes upstream (tile policies ask for it); the User-Agent is the
      // library's own (the core's default on workerd), not the visitor's browser.
      if (!coalesced) flight = startFlight(key, urls, env, ctx, cache, request.headers.get("referer"));
      const t = performance.now();
      const stranded = () => {
        if (!coalesced) flight.abort(new Error("the upstream call did not settle in time"));
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
      const out = await guard(flight, guardMs, stranded);
      timing.push(...(coalesced ? [["upstream", performance.now() - t, "coalesced"]] : out.timing));
      const meta = { "x-tilefetch-attempts": String(out.attempts), ...(coalesced ? { "x-tilefetch-coalesced": "1" } : {}) };

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

/** The client config as the proxy runs it: no queue (limiter.js), every call may probe. */
function forWorkerd(client, probes) {
  const adjust = (c, always) => {
    const { maxConcurrent, queueOrder, ...rest } = c;
    const own = c.breaker && typeof c.breaker === "object" ? c.breaker : null;
    if (!own && !always) return rest; // a host without its own breaker settings inherits the client's
    return { ...rest, maxConcurrent: 100000, breaker: { ...own, halfOpenProbes: Math.max(probes, own?.halfOpenProbes ?? 1) } };
  };
  const out = adjust(client, true);
  if (client.hosts && typeof client.hosts === "object") {
    out.hosts = Object.fromEntries(Object.entries(client.hosts).map(([h, c]) => [h, c && typeof c === "object" ? adjust(c, false) : c]));
  }
  return out;
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
