// tilefetch/worker (pkg/worker.js), the edge tile proxy, in workerd through Miniflare, against
// the loopback fault server. Miniflare instances:
//   1. "proxy", under the oldest supported and a recent compatibility date: one worker with one
//      handler per scenario (fixtures/proxy-worker.mjs routes by the first path segment), the Cache
//      API of Miniflare, no gate binding (everything per isolate);
//   2. "ssrf": every outbound request of the worker passes through a logging outboundService, and
//      a second ("evil") server stands for any host an attacker would like the proxy to reach;
//   3. "gate": two workers, a and b, bound to one UpstreamGate Durable Object class (defined by a);
//   4. examples/worker/worker.js as deployed, its upstream faked by the outboundService.
// Each scenario uses its own fault-server run (the `run` query parameter of its upstream template),
// so the server's counters per run are the upstream load of that scenario. What workerd prints is
// checked after each instance: a request resumed in another request's turn shows up there.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Miniflare } from "miniflare";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { ROOT, WORKERD_WASM, proxyModules } from "./modules.mjs";
import { installPacked } from "../packed.mjs";
import { MAX_REDIRECTS } from "../../pkg/worker/redirects.js";

// The proxy needs workerd's cross-request promise handling (a promise resolved from another
// request's turn continues in its own request), the default from compatibility date 2024-10-14.
const MIN_COMPATIBILITY_DATE = "2024-10-14";
const COMPATIBILITY_DATE = "2026-04-01";
const FAST = { baseDelayMs: 10, maxDelayMs: 50 };

const modules = () => proxyModules();

const worker = (extra) => ({ compatibilityDate: COMPATIBILITY_DATE, modulesRoot: ROOT, modules: modules(), ...extra });

/**
 * Collects what workerd prints. A request resumed in another request's turn shows up there first
 * ("A promise was resolved or rejected from a different request context", "Cannot perform I/O on
 * behalf of a different request", "… had hung …"): none may appear.
 */
function runtimeOutput() {
  let text = "";
  return {
    handle(stdout, stderr) {
      for (const stream of [stdout, stderr]) stream.on("data", (chunk) => (text += chunk));
    },
    assertClean() {
      const bad = text.split("\n").filter((l) => /different request|on behalf of a different request|hung|Uncaught|RuntimeError/i.test(l));
      assert.deepEqual(bad, [], `workerd printed:\n${text}`);
    },
  };
}

/** Fetches through a Miniflare (or a worker Fetcher) and reads the whole body. */
async function get(target, url, init) {
  const res = target instanceof Miniflare ? await target.dispatchFetch(url, init) : await target.fetch(url, init);
  const body = Buffer.from(await res.arrayBuffer());
  return { status: res.status, headers: res.headers, body, text: body.toString("utf8") };
}

const h = (r, name) => r.headers.get(name);
const tileKey = ([z, x, y]) => `${z}/${x}/${y}`;
/** All tiles of zoom z, up to n. */
const tilesOf = (z, n = Infinity) => {
  const out = [];
  for (let x = 0; x < 2 ** z && out.length < n; x++) for (let y = 0; y < 2 ** z && out.length < n; y++) out.push([z, x, y]);
  return out;
};

/**
 * Every secret parameter name the core's rule knows (src/redact.rs: SECRET_NAMES, SECRET_SUFFIXES,
 * SECRET_PREFIXES, read from the source so the test follows the one owner), in the spellings
 * the rule folds: as listed, in capitals, with `-`/`_` inside, percent-encoded.
 */
function secretNames() {
  const source = fs.readFileSync(path.join(ROOT, "src/redact.rs"), "utf8");
  const list = (name) => [...source.match(new RegExp(`pub const ${name}: \\[&str; \\d+\\] =\\s*\\[([^\\]]*)\\]`))[1].matchAll(/"([^"]*)"/g)].map((m) => m[1]);
  const names = list("SECRET_NAMES");
  const suffixes = list("SECRET_SUFFIXES");
  const prefixes = list("SECRET_PREFIXES");
  assert.ok(names.length >= 7 && suffixes.length >= 7 && prefixes.length >= 2, "the lists were found");
  const spellings = (n) => [n, n.toUpperCase(), `${n.slice(0, 1)}_${n.slice(1)}`, `${n.slice(0, 1)}-${n.slice(1).toUpperCase()}`];
  return [
    ...names.flatMap(spellings),
    ...suffixes.flatMap((x) => [x, `api${x}`, `my_${x}`, `Client-${x.toUpperCase()}`, `access%5F${x}`]),
    ...prefixes.flatMap((x) => [`${x}-signature`, `${x.replace(/^x/, "X-")}-Credential`, `${x.toUpperCase()}_DATE`]),
  ];
}
const SECRETS = secretNames();

let srv;
let evil;
before(async () => {
  assert.ok(fs.existsSync(WORKERD_WASM), `${WORKERD_WASM} is missing: build the wasm package first`);
  srv = await startFaultServer({ seed: 1 });
  evil = await startFaultServer({ seed: 2 });
});
after(async () => {
  await srv?.close();
  await evil?.close();
});

for (const compatibilityDate of [MIN_COMPATIBILITY_DATE, COMPATIBILITY_DATE]) {
  describe(`tilefetch/worker: the proxy in one isolate (Cache API, no gate), compatibilityDate ${compatibilityDate}`, () => {
    let mf;
    const runtime = runtimeOutput();
    const R = (name) => `${compatibilityDate}-${name}`; // fault-server runs unique per block
    const up = (name, q = "") => `${srv.url}/tile/{z}/{x}/{y}.png?run=${R(name)}${q}`;
    before(async () => {
      const scenario = (name, config) => [name, { route: `/${name}/{z}/{x}/{y}.png`, ...config }];
      mf = new Miniflare(
        worker({
          compatibilityDate,
          handleRuntimeStdio: runtime.handle,
          bindings: {
            SCENARIOS: Object.fromEntries([
              // three mirrors on one host, each failing 30 % of attempts in its own way
              scenario("flaky", { ...FAST, upstream: [up("flaky", "&f=503&p=0.3"), up("flaky", "&f=truncate&p=0.3"), up("flaky", "&f=html&p=0.3")] }),
              ...["503", "html", "truncate", "sexml"].map((f) =>
                scenario(`bad-${f}`, { ...FAST, deadlineMs: 300, breaker: { failureThreshold: 100 }, upstream: up(`bad-${f}`, `&f=${f}`) }),
              ),
              scenario("bad-sexml-perm", { ...FAST, upstream: up("bad-sexml-perm", "&f=sexml&code=InvalidParameterValue") }),
              scenario("stale", { ...FAST, deadlineMs: 600, cacheTtlS: 1, staleIfErrorS: 3600, upstream: up("stale") }),
              scenario("cold", {
                ...FAST,
                deadlineMs: 1500,
                maxConcurrent: 4,
                breaker: { failureThreshold: 5, openMs: 500, maxOpenMs: 1000 },
                upstream: up("cold"),
              }),
              scenario("coords", { maxZoom: 5, upstream: up("coords") }),
              scenario("same", { upstream: up("same", "&delay=50") }),
              scenario("nf", { cacheTtlByStatus: { 404: 1 }, upstream: up("nf", "&f=404") }),
              scenario("cap", { baseDelayMs: 5, maxDelayMs: 10, deadlineMs: 5000, maxSubrequests: 5, upstream: up("cap", "&f=503") }),
              scenario("rl", { upstream: up("rl", "&f=429&ra=30") }),
              scenario("rl-clock", { upstream: up("rl-clock", "&f=429&ra=30") }),
              scenario("cors", { cors: ["https://maps.example.com"], upstream: up("cors") }),
              scenario("secret", { upstream: up("secret", "&api_key=S3CRET&access_token=T0KEN&style=dark") }),
              scenario("who", { upstream: up("who") }),
              // every secret name of the core's rule, each with a value that must not reach a key
              scenario("all-secrets", { upstream: up("all-secrets", `&${SECRETS.map((n, i) => `${n}=SECRET${i}`).join("&")}&style=dark&layer=roads`) }),
              scenario("who-headers", { headers: { "x-api-user": "maps" }, upstream: up("who-headers") }),
              // bodies no tile has: 600 MiB streamed, 600 MiB declared, a gzip bomb (64 MiB inflated)
              // the proxy's defaults but a TTL that lets tiles go stale within the test
              scenario("down", { cacheTtlS: 1, upstream: up("down") }),
              scenario("huge", { upstream: up("huge", "&f=huge") }),
              scenario("hugelen", { upstream: up("hugelen", "&f=hugelen") }),
              scenario("bomb", { upstream: up("bomb", "&f=gzipbomb") }),
            ]),
          },
        }),
      );
      await mf.ready;
    });
    after(async () => {
      await mf?.dispose();
    });
    after(() => runtime.assertClean());

    test("flaky upstream (503 / truncated / HTML, 30 % each mirror): every tile 200 with the right bytes, then from the cache", async (t) => {
      const tiles = tilesOf(3, 48);
      const first = await Promise.all(tiles.map((xyz) => get(mf, `http://proxy.test/flaky/${tileKey(xyz)}.png`)));
      let attempts = 0;
      first.forEach((r, i) => {
        assert.equal(r.status, 200, `${tileKey(tiles[i])}: ${r.text}`);
        assert.ok(r.body.equals(tilePng(...tiles[i])), `${tileKey(tiles[i])}: the true bytes`);
        assert.equal(h(r, "content-type"), "image/png");
        assert.equal(h(r, "x-tilefetch-cache"), "miss");
        assert.match(h(r, "server-timing"), /upstream;dur=[\d.]+;desc="\d+ attempts?", total;dur=/);
        attempts += Number(h(r, "x-tilefetch-attempts"));
      });
      const requests = srv.requests(R("flaky"));
      assert.equal(attempts, requests, "x-tilefetch-attempts adds up to what the upstream saw");
      assert.ok(requests > tiles.length, "some attempts failed and were retried");
      t.diagnostic(`${tiles.length} tiles, all 200 with the true bytes; upstream requests ${requests} (${(requests / tiles.length).toFixed(2)} per tile)`);

      const second = await Promise.all(tiles.map((xyz) => get(mf, `http://proxy.test/flaky/${tileKey(xyz)}.png`)));
      second.forEach((r, i) => {
        assert.equal(r.status, 200);
        assert.equal(h(r, "x-tilefetch-cache"), "hit");
        assert.equal(h(r, "x-tilefetch-attempts"), "0");
        assert.ok(r.body.equals(tilePng(...tiles[i])), "no error body was ever cached as a tile");
        assert.match(h(r, "cache-control"), /^public, max-age=\d+$/);
      });
      assert.equal(srv.requests(R("flaky")), requests, "the second pass sent nothing upstream");
      t.diagnostic(`second pass: ${tiles.length} cache hits, 0 upstream requests`);
    });

    test("upstream requests carry the library's User-Agent and the map page's Referer", async () => {
      const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, "pkg/package.json"), "utf8"));
      const agent = `tilefetch/${pkg.version} (+${pkg.homepage})`;
      const page = "https://maps.example.com/city.html";
      const sent = (run) =>
        srv.log.filter((e) => e.key.startsWith(`${R(run)}/`)).map((e) => [e.headers["user-agent"], e.headers.referer, e.headers["x-api-user"]]);
      for (const [run, referer] of [
        ["who", page],
        ["who", null],
        ["who-headers", page],
      ]) {
        const xyz = referer ? [3, 1, 1] : [3, 2, 2];
        const r = await get(mf, `http://proxy.test/${run}/${tileKey(xyz)}.png`, {
          headers: { "user-agent": "Mozilla/5.0 (visitor)", ...(referer ? { referer } : {}) },
        });
        assert.equal(r.status, 200, r.text);
      }
      assert.deepEqual(sent("who"), [
        [agent, page, undefined],
        [agent, undefined, undefined],
      ]);
      assert.deepEqual(sent("who-headers"), [[agent, page, "maps"]], "the client's own headers are kept beside the Referer");
    });

    test("concurrent requests for one tile share one upstream call", async (t) => {
      const rs = await Promise.all(Array.from({ length: 8 }, () => get(mf, "http://proxy.test/same/5/7/9.png")));
      for (const r of rs) assert.ok(r.status === 200 && r.body.equals(tilePng(5, 7, 9)));
      assert.equal(srv.requests(R("same")), 1);
      const coalesced = rs.filter((r) => h(r, "x-tilefetch-coalesced") === "1").length;
      assert.ok(coalesced >= 1, "the others waited for the first one's call (or found its tile cached)");
      t.diagnostic(`8 concurrent requests: 1 upstream request, ${coalesced} coalesced, ${8 - coalesced - 1} cache hits`);
    });

    test("ServiceException, HTML, truncated bodies and 5xx are never cached", async (t) => {
      for (const f of ["503", "html", "truncate", "sexml", "sexml-perm"]) {
        const run = `bad-${f}`;
        const a = await get(mf, `http://proxy.test/${run}/2/1/1.png`);
        const n1 = srv.requests(R(run));
        const b = await get(mf, `http://proxy.test/${run}/2/1/1.png`);
        const n2 = srv.requests(R(run));
        // A request error (InvalidParameterValue) is the upstream's answer, not its failure: 502.
        const status = f === "sexml-perm" ? 502 : 503;
        assert.equal(a.status, status, `${f}: ${a.text}`);
        assert.equal(b.status, status, `${f}: ${b.text}`);
        assert.equal(h(b, "x-tilefetch-cache"), "miss");
        assert.equal(h(b, "cache-control"), "no-store");
        assert.ok(n1 >= 1 && n2 > n1, `${f}: the second request went upstream again (${n1} → ${n2})`);
        assert.ok(!b.body.includes("ServiceException") && !b.body.includes("<html"), "no upstream body is passed on");
        t.diagnostic(`${f}: ${a.status} twice, upstream requests ${n1} then ${n2}`);
      }
    });

    test("bodies over maxBytes (the default 32 MiB): 502 after one upstream request, never cached; the isolate serves on", async (t) => {
      for (const name of ["huge", "hugelen", "bomb"]) {
        const t0 = Date.now();
        const a = await get(mf, `http://proxy.test/${name}/2/1/1.png`);
        const ms = Date.now() - t0;
        assert.equal(a.status, 502, `${name}: ${a.text}`);
        assert.match(a.text, /larger than maxBytes/);
        assert.equal(h(a, "cache-control"), "no-store");
        assert.equal(srv.requests(R(name)), 1, `${name}: one upstream request`);
        const b = await get(mf, `http://proxy.test/${name}/2/1/1.png`);
        assert.equal(b.status, 502);
        assert.equal(h(b, "x-tilefetch-cache"), "miss", `${name}: not cached`);
        const sent = srv.log.filter((e) => e.key.startsWith(`${R(name)}/`)).map((e) => e.bytesSent ?? 0);
        t.diagnostic(`${name}: 502 in ${ms} ms, then 502 again (a miss); the upstream wrote ${sent.map((n) => (n / 1048576).toFixed(1)).join(" + ")} MiB`);
      }
      const after = await get(mf, "http://proxy.test/who/2/1/1.png");
      assert.equal(after.status, 200, "the isolate serves the next tile");
      assert.deepEqual(after.body, tilePng(2, 1, 1));
    });

    test("outage after a warm cache: the stale tiles are served", async (t) => {
      const tiles = tilesOf(4, 8);
      const warm = await Promise.all(tiles.map((xyz) => get(mf, `http://proxy.test/stale/${tileKey(xyz)}.png`)));
      for (const r of warm) assert.equal(r.status, 200);
      assert.equal(srv.requests(R("stale")), tiles.length);
      await sleep(1100); // past cacheTtlS: 1
      srv.outage(R("stale"), 60_000);
      const t0 = performance.now();
      const during = await Promise.all(tiles.map((xyz) => get(mf, `http://proxy.test/stale/${tileKey(xyz)}.png`)));
      const wall = performance.now() - t0;
      during.forEach((r, i) => {
        assert.equal(r.status, 200, r.text);
        assert.ok(r.body.equals(tilePng(...tiles[i])), "the stale copy's bytes");
        assert.equal(h(r, "x-tilefetch-stale"), "1");
        assert.equal(h(r, "x-tilefetch-cache"), "stale");
        assert.equal(h(r, "warning"), '111 - "Revalidation Failed"');
        assert.ok(Number(h(r, "age")) >= 1, `Age ${h(r, "age")}`);
        assert.equal(h(r, "cache-control"), "no-cache");
      });
      const outageRequests = srv.requests(R("stale")) - tiles.length;
      assert.ok(outageRequests >= tiles.length, "each tile was tried upstream first");
      const cold = await get(mf, "http://proxy.test/stale/4/15/15.png");
      assert.equal(cold.status, 503, "a tile never cached has nothing stale to fall back on");
      assert.match(h(cold, "retry-after"), /^\d+$/);
      t.diagnostic(
        `${tiles.length} stale tiles served in ${wall.toFixed(0)} ms after ${outageRequests} failed upstream requests; an uncached tile: 503, Retry-After ${h(cold, "retry-after")}`,
      );
    });

    test("outage, proxy defaults: the stale tile at the first failed attempt, at once once known down; an uncached tile 503 at once, nothing sent; then recovery", async (t) => {
      const run = R("down");
      const cached = [
        [3, 1, 1],
        [3, 1, 2],
        [3, 1, 3],
      ];
      for (const xyz of cached) assert.equal((await get(mf, `http://proxy.test/down/${tileKey(xyz)}.png`)).status, 200);
      await sleep(1100); // past cacheTtlS: 1
      srv.outage(run, 60_000);
      const timed = async (xyz) => {
        const before = srv.requests(`${run}/${tileKey(xyz)}`);
        const t0 = performance.now();
        const r = await get(mf, `http://proxy.test/down/${tileKey(xyz)}.png`);
        return { r, ms: performance.now() - t0, sent: srv.requests(`${run}/${tileKey(xyz)}`) - before };
      };
      // The first call: its first attempt fails (503), the stale copy goes out, the call goes on.
      const first = await timed(cached[0]);
      assert.equal(first.r.status, 200, first.r.text);
      assert.equal(h(first.r, "x-tilefetch-stale"), "1");
      assert.ok(first.r.body.equals(tilePng(...cached[0])));
      assert.ok(first.ms <= 1000, `the stale tile after ${first.ms.toFixed(0)} ms`);
      // The same tile again while its revalidation runs: the copy at once, no second revalidation
      // (the first one's retries go on meanwhile, one at a time).
      const again = await timed(cached[0]);
      assert.equal(h(again.r, "x-tilefetch-stale"), "revalidating");
      assert.equal(srv.peakConcurrent(`${run}/${tileKey(cached[0])}`), 1, "one upstream request for the tile at a time");
      // Uncached tiles until the isolate's breaker opens (the defaults: 10 failures).
      let downAt = null;
      const uncached = [];
      for (let i = 0; i < 20 && downAt === null; i++) {
        const u = await timed([5, i, 7]);
        uncached.push(u);
        assert.equal(u.r.status, 503, u.r.text);
        if (/known down/.test(u.r.text)) downAt = i;
      }
      assert.ok(downAt !== null, `known down after ${uncached.length} uncached calls: ${uncached.map((u) => u.r.text.trim()).join(" | ")}`);
      const fast = uncached[downAt];
      assert.ok(fast.ms <= 100, `a 503 once known down after ${fast.ms.toFixed(0)} ms`);
      assert.equal(fast.sent, 0, "nothing sent upstream for it");
      assert.match(h(fast.r, "retry-after"), /^\d+$/);
      // A stale tile once known down: at once, nothing sent.
      const known = await timed(cached[1]);
      assert.equal(known.r.status, 200);
      assert.equal(h(known.r, "x-tilefetch-stale"), "down");
      assert.ok(known.ms <= 100, `the stale tile once known down after ${known.ms.toFixed(0)} ms`);
      assert.equal(known.sent, 0);
      // Recovery: the outage ends; fresh tiles again, the stale copies replaced.
      srv.reset();
      const t0 = performance.now();
      let recovered = null;
      while (performance.now() - t0 < 5000) {
        const r = await get(mf, "http://proxy.test/down/3/1/3.png");
        if (r.status === 200 && h(r, "x-tilefetch-stale") === null) {
          recovered = performance.now() - t0;
          break;
        }
        await sleep(50);
      }
      assert.ok(recovered !== null && recovered <= 2000, `a fresh tile ${recovered?.toFixed(0)} ms after the outage`);
      t.diagnostic(
        `stale tile, first call: ${first.ms.toFixed(0)} ms (${first.sent} upstream request before it went out); again while revalidating: ${again.ms.toFixed(0)} ms (the revalidation sent ${again.sent} meanwhile); ` +
          `known down after ${downAt + 1} uncached calls (${uncached.map((u) => `${u.ms.toFixed(0)} ms/${u.sent}`).join(", ")}); then a 503 in ${fast.ms.toFixed(0)} ms, ` +
          `a stale tile in ${known.ms.toFixed(0)} ms, 0 sent; a fresh tile ${recovered.toFixed(0)} ms after the outage`,
      );
    });

    test("outage with a cold cache: 503 + Retry-After, and bounded upstream load", async (t) => {
      // Bound. Before the breaker opens: f consecutive failures, plus what the other calls in flight
      // (at most maxConcurrent c) send meanwhile. Then every call still in the client waits for the
      // half-open time and probes (the proxy never lets a call wait for another's probe; see
      // pkg/worker.js): at most c per half-open for the calls that were in flight, whose deadline D
      // allows at most ⌈D/(0.8·o)⌉ half-opens (open time o ±20 %, growing ×1.5); new calls are let in
      // one at a time while the breaker is not closed: one probe per half-open over the phase's T ms.
      // upstream requests ≤ f + c + c·⌈D/(0.8·o)⌉ + ⌈T/(0.8·o)⌉, however many requests arrive.
      const D = 1500;
      const f = 5;
      const c = 4;
      const o = 500;
      srv.outage(R("cold"), 60_000);
      const tiles = tilesOf(4, 40);
      const t0 = performance.now();
      const rs = await Promise.all(tiles.map((xyz) => get(mf, `http://proxy.test/cold/${tileKey(xyz)}.png`)));
      const T = performance.now() - t0;
      const retryAfter = new Set();
      for (const r of rs) {
        assert.equal(r.status, 503, r.text);
        assert.match(h(r, "retry-after"), /^[1-9]\d*$/);
        retryAfter.add(Number(h(r, "retry-after")));
        assert.ok(Number(h(r, "x-tilefetch-attempts")) <= 40 - 2);
      }
      const requests = srv.requests(R("cold"));
      const bound = f + c + c * Math.ceil(D / (0.8 * o)) + Math.ceil(T / (0.8 * o));
      assert.ok(requests <= bound, `upstream saw ${requests} requests, bound ${bound}`);
      assert.ok(Math.max(...retryAfter) <= 2, `Retry-After follows the breaker (maxOpenMs 1000): ${[...retryAfter]}`);
      t.diagnostic(
        `${tiles.length} requests in ${T.toFixed(0)} ms: all 503, Retry-After ${[...retryAfter].join("/")} s; upstream requests ${requests} ≤ f + c + c·⌈D/0.8o⌉ + ⌈T/0.8o⌉ = ${bound} (${tiles.length} requests × up to 38 attempts without the breaker)`,
      );
    });

    test("invalid coordinates → 400 with a reason; nothing sent upstream", async (t) => {
      const bad = [
        "6/0/0",
        "1/2/0",
        "1/0/2",
        "5/32/0",
        "5/0/32",
        "-1/0/0",
        "1/-1/0",
        "1/0/1.5",
        "1/0/1e0",
        "1/0/0x1",
        "1/0/+1",
        "1/0/%31",
        "1/0/%EF%BC%91",
        "1/abc/0",
        "/0/0",
        "1//0",
        "1/0/",
        "99999999999/0/0",
        "1/0/%20",
        "1/0/..%2F0",
      ];
      for (const p of bad) {
        const r = await get(mf, `http://proxy.test/coords/${p}.png`);
        assert.equal(r.status, 400, `${p}: ${r.status} ${r.text}`);
        assert.match(r.text, /^invalid tile: [xyz] must be/);
        assert.equal(h(r, "cache-control"), "no-store");
      }
      assert.equal(srv.requests(R("coords")), 0);
      const notTile = await get(mf, "http://proxy.test/coords/1/0/0.jpg");
      assert.equal(notTile.status, 404);
      const edge = await get(mf, "http://proxy.test/coords/5/31/31.png");
      assert.equal(edge.status, 200);
      assert.ok(edge.body.equals(tilePng(5, 31, 31)));
      t.diagnostic(`${bad.length} invalid paths → 400, 0 upstream requests; 5/31/31 (maxZoom 5) → 200`);
    });

    test("404 is cached for its own short TTL only", async (t) => {
      const a = await get(mf, "http://proxy.test/nf/3/1/1.png");
      assert.equal(a.status, 404);
      assert.equal(h(a, "x-tilefetch-cache"), "miss");
      assert.equal(h(a, "cache-control"), "public, max-age=1");
      assert.equal(srv.requests(R("nf")), 1);
      // The cache write is a waitUntil: wait for it (within the TTL), as the cache-key tests do.
      const caches = await mf.getCaches();
      const key = `${srv.url}/tile/3/1/1.png?run=${R("nf")}&f=404`;
      let stored;
      for (const end = Date.now() + 800; !stored && Date.now() < end; await sleep(10)) stored = await caches.default.match(key);
      assert.ok(stored, "the 404 stored");
      const b = await get(mf, "http://proxy.test/nf/3/1/1.png");
      assert.equal(b.status, 404);
      assert.equal(h(b, "x-tilefetch-cache"), "hit");
      assert.equal(srv.requests(R("nf")), 1, "within the TTL: from the cache");
      await sleep(1100);
      const c = await get(mf, "http://proxy.test/nf/3/1/1.png");
      assert.equal(c.status, 404);
      assert.equal(h(c, "x-tilefetch-cache"), "miss");
      assert.equal(srv.requests(R("nf")), 2, "after the TTL: upstream again");
      t.diagnostic("404: upstream 1, then a cache hit, then upstream again 1.1 s later (cacheTtlByStatus 404: 1 s)");
    });

    test("maxSubrequests bounds the upstream attempts of one request", async (t) => {
      const r = await get(mf, "http://proxy.test/cap/2/0/0.png");
      assert.equal(r.status, 503);
      assert.equal(h(r, "x-tilefetch-attempts"), "2");
      assert.equal(srv.requests(R("cap")), 2, "maxSubrequests 5 − 2 cache operations − 1 kept for a hedge = 2 upstream attempts");
      t.diagnostic(`maxSubrequests 5: 2 upstream attempts (+ cache match and put, 1 kept for a hedge), then 503, Retry-After ${h(r, "retry-after")}`);
    });

    test("the upstream's 429 is passed on with its Retry-After", async (t) => {
      const r = await get(mf, "http://proxy.test/rl/2/0/0.png");
      assert.equal(r.status, 429, r.text);
      const ra = Number(h(r, "retry-after"));
      assert.ok(ra >= 29 && ra <= 30, `Retry-After ${ra}`);
      assert.equal(srv.requests(R("rl")), 1);
      t.diagnostic(`upstream 429 + Retry-After: 30 → 429, Retry-After ${ra}, 1 upstream request`);
    });

    test("a Retry-After passed on is the upstream's, whatever the clocks' ticks", async (t) => {
      // Date.now() steps 5 ms at each reading: a `now` read before the client's stats would be a
      // step older than the epoch they were mapped at, and make the 30 s pause 31 s.
      const r = await get(mf, "http://proxy.test/rl-clock/2/0/0.png", { headers: { "x-test-clock-step-ms": "5" } });
      assert.equal(r.status, 429, r.text);
      assert.equal(h(r, "retry-after"), "30");
      assert.equal(srv.requests(R("rl-clock")), 1);
      t.diagnostic(`upstream 429 + Retry-After: 30, Date.now() stepping 5 ms a reading → Retry-After ${h(r, "retry-after")}`);
    });

    test("the cache key is the upstream URL without its secrets", async (t) => {
      const r = await get(mf, "http://proxy.test/secret/2/1/3.png");
      assert.equal(r.status, 200);
      const sent = srv.log.find((e) => e.key === `${R("secret")}/2/1/3`);
      assert.match(sent.path, /api_key=S3CRET&access_token=T0KEN/, "the upstream gets the secrets");
      const caches = await mf.getCaches();
      const base = `${srv.url}/tile/2/1/3.png?run=${R("secret")}`;
      let hit;
      for (const end = Date.now() + 2000; !hit && Date.now() < end; await sleep(20)) hit = await caches.default.match(`${base}&style=dark`); // written in waitUntil
      assert.ok(hit, "stored under the URL without api_key and access_token");
      assert.ok(Buffer.from(await hit.arrayBuffer()).equals(tilePng(2, 1, 3)));
      const withSecret = await caches.default.match(`${base}&api_key=S3CRET&access_token=T0KEN&style=dark`);
      assert.equal(withSecret, undefined);
      t.diagnostic(`cache key: ${base.replace(srv.url, "<upstream>")}&style=dark`);
    });

    test("the cache key drops every secret name of the core's rule, and keeps the other parameters", async (t) => {
      const r = await get(mf, "http://proxy.test/all-secrets/2/2/3.png");
      assert.equal(r.status, 200, r.text);
      const sent = srv.log.find((e) => e.key === `${R("all-secrets")}/2/2/3`);
      assert.ok(
        SECRETS.every((_n, i) => sent.path.includes(`SECRET${i}&`)),
        "the upstream gets every secret",
      );
      const caches = await mf.getCaches();
      const key = `${srv.url}/tile/2/2/3.png?run=${R("all-secrets")}&style=dark&layer=roads`;
      let hit;
      for (const end = Date.now() + 2000; !hit && Date.now() < end; await sleep(20)) hit = await caches.default.match(key);
      assert.ok(hit, `stored under ${key}: the URL without any of the ${SECRETS.length} secret parameters`);
      t.diagnostic(`${SECRETS.length} secret spellings (${SECRETS.slice(0, 6).join(", ")} …) dropped from the cache key; style and layer kept`);
    });

    test("CORS: preflight, allowed and other origins", async () => {
      const pre = await get(mf, "http://proxy.test/flaky/0/0/0.png", {
        method: "OPTIONS",
        headers: { origin: "https://a.example", "access-control-request-method": "GET" },
      });
      assert.equal(pre.status, 204);
      assert.equal(h(pre, "access-control-allow-origin"), "*");
      const ok = await get(mf, "http://proxy.test/cors/1/0/0.png", { headers: { origin: "https://maps.example.com" } });
      assert.equal(h(ok, "access-control-allow-origin"), "https://maps.example.com");
      assert.match(h(ok, "access-control-expose-headers"), /Retry-After/);
      const other = await get(mf, "http://proxy.test/cors/1/0/0.png", { headers: { origin: "https://evil.example" } });
      assert.equal(h(other, "access-control-allow-origin"), null);
      assert.equal(h(other, "vary"), "Origin");
      const post = await get(mf, "http://proxy.test/cors/1/0/0.png", { method: "POST", body: "x" });
      assert.equal(post.status, 405);
    });

    test("config is validated up front: a TileError naming the field", async (t) => {
      const u = "https://tiles.example.com/{z}/{x}/{y}.png";
      const cases = [
        [{}, "upstream"],
        [{ upstream: "tiles.example.com/{z}/{x}/{y}.png" }, "upstream"],
        [{ upstream: "ftp://tiles.example.com/{z}/{x}/{y}.png" }, "upstream"],
        [{ upstream: "https://{z}.tiles.example.com/{x}/{y}.png" }, "upstream"],
        [{ upstream: [u, "https://tiles.example.com/{z}/{x}.png"] }, "upstream[1]"],
        [{ upstream: "https://user:pw@tiles.example.com/{z}/{x}/{y}.png" }, "upstream"],
        [{ upstream: u, route: "/tiles/{z}/{x}.png" }, "route"],
        [{ upstream: u, maxZoom: 31 }, "maxZoom"],
        [{ upstream: u, cacheTtlS: -1 }, "cacheTtlS"],
        [{ upstream: u, cacheTtlByStatus: { 503: 10 } }, 'cacheTtlByStatus["503"]'],
        [{ upstream: u, staleIfErrorS: "1d" }, "staleIfErrorS"],
        [{ upstream: u, maxSubrequests: 2 }, "maxSubrequests"],
        [{ upstream: u, redirects: "https://cdn.example.com" }, "redirects"],
        [{ upstream: u, redirects: ["https://cdn.example.com/path"] }, "redirects[0]"],
        [{ upstream: u, cors: "maps.example.com" }, "cors"],
        [{ upstream: u, gate: { openms: 1 } }, "gate.openms"],
        [{ upstream: u, cacheTTLs: 1 }, "cacheTTLs"],
        [{ upstream: u, deadlinems: 1 }, "deadlinems"],
        [{ upstream: u, breaker: { openMs: -1 } }, "breaker.openMs"],
      ];
      for (const [config, field] of cases) {
        const r = await get(mf, "http://proxy.test/__config", { method: "POST", body: JSON.stringify(config) });
        const out = JSON.parse(r.text);
        assert.equal(out.ok, false, `${JSON.stringify(config)} was accepted`);
        assert.equal(out.instanceofTileError, true);
        assert.equal(out.kind, "invalid-options");
        assert.ok(out.message.startsWith(`invalid \`${field}\``), `${JSON.stringify(config)}: ${out.message}`);
      }
      const good = await get(mf, "http://proxy.test/__config", {
        method: "POST",
        body: JSON.stringify({ upstream: u, preset: "batch", gate: false, cors: false }),
      });
      assert.deepEqual(JSON.parse(good.text), { ok: true });
      t.diagnostic(`${cases.length} bad configs rejected, each naming its field`);
    });
  });
}

describe("tilefetch/worker: nothing from the request chooses the upstream host (SSRF)", () => {
  let mf;
  const outbound = [];
  const runtime = runtimeOutput();
  before(async () => {
    mf = new Miniflare(
      worker({
        handleRuntimeStdio: runtime.handle,
        bindings: {
          SCENARIOS: { ssrf: { route: "/tiles/{z}/{x}/{y}.png", maxZoom: 4, upstream: `${srv.url}/tile/{z}/{x}/{y}.png?run=ssrf` } },
          DEFAULT: "ssrf",
        },
        // Every fetch the worker makes passes through here (the cache is not a fetch).
        outboundService: (request) => {
          outbound.push(request.url);
          return fetch(request.url, { method: request.method, headers: request.headers });
        },
      }),
    );
    await mf.ready;
  });
  after(async () => {
    await mf?.dispose();
  });
  after(() => runtime.assertClean());

  test("encoded slashes, @, .., absolute URLs and //host in every position", async (t) => {
    const E = `127.0.0.1:${evil.port}`;
    const payloads = [];
    const hostile = [
      `%2F%2F${E}`,
      `%2f%2f${E}%2ftile`,
      `@${E}`,
      `..`,
      `%2e%2e`,
      `..%2F..%2F${E}`,
      `http:%2F%2F${E}%2F`,
      `http://${E}/`,
      `//${E}`,
      `\\\\${E}`,
      `1@${E}`,
      `1%40${E}`,
      `1#@${E}`,
      `1?@${E}`,
      `1;@${E}`,
      `%00${E}`,
    ];
    for (const bad of hostile) {
      payloads.push(`/tiles/${bad}/0/0.png`, `/tiles/1/${bad}/0.png`, `/tiles/1/0/${bad}.png`, `/tiles/1/0/0.png${bad}`, `/${bad}/tiles/1/0/0.png`);
    }
    payloads.push(`//${E}/tiles/1/0/0.png`, `///${E}/tiles/1/0/0.png`, `/tiles/1/0/0.png/..%2F..%2F${E}`, `/tiles/1/0/../../../${E}/0.png`);
    const results = [];
    for (const p of payloads) {
      let res;
      try {
        res = await get(mf, `http://proxy.test${p}`);
      } catch {
        continue; // a URL the client library itself refuses never reaches the worker
      }
      results.push([p, res.status]);
      assert.ok([200, 400, 404].includes(res.status), `${p}: ${res.status} ${res.text}`);
      if (res.status === 200) {
        // Only a path that URL parsing normalises to a valid tile path (e.g. "/../tiles/1/0/0.png"):
        // the tile it names, from the upstream.
        const m = new URL(`http://proxy.test${p}`).pathname.match(/^\/tiles\/(\d+)\/(\d+)\/(\d+)\.png$/);
        assert.ok(m, `${p} → 200`);
        assert.ok(res.body.equals(tilePng(...m.slice(1).map(Number))));
      }
    }
    // The request's host, query and headers are ignored; the tile comes from the upstream.
    const sideDoors = [
      [`http://${E}/tiles/1/0/0.png`, {}],
      [`http://proxy.test/tiles/1/0/0.png?upstream=http://${E}/&url=//${E}/x&run=evil&f=hang`, {}],
      [
        `http://proxy.test/tiles/1/0/1.png`,
        {
          headers: {
            host: E,
            "x-forwarded-host": E,
            forwarded: `host=${E}`,
            "x-original-url": `http://${E}/`,
            "x-rewrite-url": `//${E}/`,
            referer: `http://${E}/`,
            origin: `http://${E}`,
          },
        },
      ],
    ];
    for (const [url, init] of sideDoors) {
      const r = await get(mf, url, init);
      assert.equal(r.status, 200, `${url}: ${r.text}`);
      const [z, x, y] = new URL(url).pathname
        .match(/(\d+)\/(\d+)\/(\d+)\.png$/)
        .slice(1)
        .map(Number);
      assert.ok(r.body.equals(tilePng(z, x, y)));
    }
    const hosts = new Set(outbound.map((u) => new URL(u).host));
    assert.deepEqual([...hosts], [new URL(srv.url).host], `outbound hosts: ${[...hosts]}`);
    assert.equal(evil.requests(), 0, "the other host saw nothing");
    for (const e of srv.log.filter((l) => l.key.startsWith("ssrf/"))) assert.match(e.path, /^\/tile\/\d+\/\d+\/\d+\.png\?run=ssrf$/);
    const by = {};
    for (const [, s] of results) by[s] = (by[s] ?? 0) + 1;
    t.diagnostic(
      `200: ${results
        .filter(([, s]) => s === 200)
        .map(([p]) => p)
        .join(", ")}`,
    );
    t.diagnostic(
      `${results.length} hostile paths → ${JSON.stringify(by)}; ${sideDoors.length} hostile host/query/header requests → 200 from the upstream; outbound requests ${outbound.length}, all to ${[...hosts]}`,
    );
  });
});

describe("tilefetch/worker: two workers share one UpstreamGate Durable Object", () => {
  let mf;
  let srv2; // a second upstream host, for a proxy with mirrors on two hosts
  const runtime = runtimeOutput();
  const OPEN_MS = 2000;
  const gateConfig = (run) => ({
    ...FAST,
    deadlineMs: 300,
    breaker: { failureThreshold: 100 }, // the isolates' own breakers stay closed: the gate decides
    gate: { failureThreshold: 3, openMs: OPEN_MS, maxOpenMs: OPEN_MS },
    upstream: `${srv.url}/tile/{z}/{x}/{y}.png?run=${run}`,
  });
  before(async () => {
    srv2 = await startFaultServer({ seed: 2 });
    const base = worker({});
    delete base.compatibilityDate;
    mf = new Miniflare({
      compatibilityDate: COMPATIBILITY_DATE,
      handleRuntimeStdio: runtime.handle,
      workers: [
        { ...base, name: "a", bindings: { SCENARIOS: { gate: gateConfig("gateA") }, DEFAULT: "gate" }, durableObjects: { UPSTREAM_GATE: "UpstreamGate" } },
        {
          ...base,
          name: "b",
          bindings: { SCENARIOS: { gate: gateConfig("gateB") }, DEFAULT: "gate" },
          durableObjects: { UPSTREAM_GATE: { className: "UpstreamGate", scriptName: "a" } },
        },
        {
          ...base,
          name: "mirrors",
          bindings: {
            SCENARIOS: {
              gate: {
                ...FAST,
                deadlineMs: 1000,
                breaker: { failureThreshold: 100 },
                gate: { failureThreshold: 3, openMs: OPEN_MS, maxOpenMs: OPEN_MS },
                upstream: [`${srv.url}/tile/{z}/{x}/{y}.png?run=mirA`, `${srv2.url}/tile/{z}/{x}/{y}.png?run=mirB`],
              },
            },
            DEFAULT: "gate",
          },
          durableObjects: { UPSTREAM_GATE: { className: "UpstreamGate", scriptName: "a" } },
        },
        {
          ...base,
          name: "down",
          bindings: { SCENARIOS: { gate: { ...gateConfig("gateDown"), breaker: { failureThreshold: 3, openMs: 5000, maxOpenMs: 5000 } } }, DEFAULT: "gate" },
          durableObjects: { UPSTREAM_GATE: { className: "DownGate", scriptName: "a" } },
        },
      ],
    });
    await mf.ready;
  });
  after(async () => {
    await mf?.dispose();
    await srv2?.close();
  });
  after(() => runtime.assertClean());

  async function gateState(server = srv) {
    const ns = await mf.getDurableObjectNamespace("UPSTREAM_GATE", "a");
    const stub = ns.get(ns.idFromName(new URL(server.url).host));
    const res = await stub.fetch("http://gate/", { method: "POST", body: JSON.stringify({ op: "state" }) });
    return res.json();
  }

  test("worker a's first failed attempts open the shared breaker within its first call; worker b sends nothing during the open time", async (t) => {
    const a = await mf.getWorker("a");
    const b = await mf.getWorker("b");
    srv.outage("gateA", 60_000);
    // One call: each failed attempt is reported as it happens, so the gate opens at its third
    // (failureThreshold 3) and refuses the fourth, long before the call would have given up.
    const first = await get(a, "http://a.test/tiles/2/0/0.png");
    assert.equal(first.status, 503, first.text);
    assert.equal(h(first, "x-tilefetch-attempts"), "3", "three upstream attempts, then the gate's refusal");
    assert.match(first.text, /upstream gate: the shared breaker is open/);
    assert.equal(srv.requests("gateA"), 3);
    const again = await get(a, "http://a.test/tiles/2/1/0.png");
    assert.equal(again.status, 503);
    assert.equal(h(again, "x-tilefetch-attempts"), "0", "a's next call is refused before it sends");
    const tripped = performance.now();
    const state = await gateState();
    assert.equal(state.state, "open", JSON.stringify(state));
    const aSent = srv.requests("gateA");

    // Worker b's own breaker is closed and its upstream run is healthy: only the gate stops it.
    const rs = await Promise.all([0, 1, 2, 3].flatMap((x) => [0, 1].map((y) => get(b, `http://b.test/tiles/2/${x}/${y}.png`))));
    const more = await get(a, "http://a.test/tiles/2/3/0.png");
    const within = performance.now() - tripped;
    assert.ok(within < 0.8 * OPEN_MS, `the checks ran within the open time (${within.toFixed(0)} ms)`);
    for (const r of [...rs, more]) {
      assert.equal(r.status, 503, r.text);
      assert.equal(h(r, "x-tilefetch-attempts"), "0");
      const ra = Number(h(r, "retry-after"));
      // The core's breaker jitters each open time by ±20 %.
      assert.ok(ra >= 1 && ra <= Math.ceil((1.2 * OPEN_MS) / 1000), `Retry-After ${ra}`);
      // Refused by the gate, or by the isolate's own pause that an earlier refusal set (the
      // fast path: not even the gate is asked, nor the client called).
      assert.match(r.text, /upstream gate: the shared breaker is open|upstream rate-limited|upstream known down/);
    }
    assert.ok(
      rs.some((r) => /upstream gate/.test(r.text)),
      "b heard it from the gate",
    );
    assert.equal(srv.requests("gateB"), 0, "worker b sent nothing upstream while the shared breaker was open");
    assert.equal(srv.requests("gateA"), aSent, "nor did worker a");
    t.diagnostic(
      `a: one call's ${aSent} failed attempts opened the gate; within ${within.toFixed(0)} ms b got ${rs.length} × 503 (Retry-After ${h(rs[0], "retry-after")} s), 0 upstream requests`,
    );

    // After the open time one probe goes (from b, whose upstream run is healthy) and closes it.
    await sleep(Math.max(0, state.openUntil - Date.now()) + 100);
    const probe = await get(b, "http://b.test/tiles/2/0/0.png");
    assert.equal(probe.status, 200, probe.text);
    assert.ok(probe.body.equals(tilePng(2, 0, 0)));
    const after = await gateState();
    assert.equal(after.state, "closed", JSON.stringify(after));
    const rest = await Promise.all([1, 2, 3].map((x) => get(b, `http://b.test/tiles/2/${x}/1.png`)));
    for (const r of rest) assert.equal(r.status, 200);
    assert.equal(srv.requests("gateB"), 4);
    t.diagnostic(`after the open time: b's probe 200 closed the gate (opened ${after.opened}×, denied ${after.denied}); b then fetched 3 more tiles`);
  });
  test("one gate per upstream host: an outage of one mirror host opens its gate only, and tiles come from the other", async (t) => {
    const mirrors = await mf.getWorker("mirrors");
    srv.outage("mirA", 60_000);
    const rs = [];
    for (const x of [0, 1, 2, 3, 4, 5]) rs.push(await get(mirrors, `http://m.test/tiles/3/${x}/3.png`));
    for (const [x, r] of rs.entries()) {
      assert.equal(r.status, 200, r.text);
      assert.ok(r.body.equals(tilePng(3, x, 3)));
    }
    const [a, b] = [await gateState(srv), await gateState(srv2)];
    assert.equal(a.state, "open", `the failing host's gate: ${JSON.stringify(a)}`);
    assert.equal(b.state, "closed", `the healthy host's gate: ${JSON.stringify(b)}`);
    // Each tile's attempt was admitted by B's gate; its success is told with the next admit.
    assert.ok(b.admitted >= 6 && b.failed === 0 && b.ok >= 5, `B's gate: ${JSON.stringify(b)}`);
    const sentA = srv.requests("mirA");
    assert.ok(sentA <= 3 + 1, `the failing host saw its threshold and no more: ${sentA}`);
    t.diagnostic(
      `6 tiles 200 from host B; host A: ${sentA} requests, its gate ${a.state} (failed ${a.failed}, denied ${a.denied}); host B's gate ${b.state} (ok ${b.ok})`,
    );
  });

  test("a gate that is down: every tile is served, the gate is asked once, and the isolate's own breaker still bounds an outage", async (t) => {
    const down = await mf.getWorker("down");
    const rs = [];
    for (const x of [0, 1, 2, 3]) for (const y of [0, 1]) rs.push(await get(down, `http://down.test/tiles/3/${x}/${y}.png`));
    for (const [i, r] of rs.entries()) {
      assert.equal(r.status, 200, r.text);
      assert.ok(r.body.equals(tilePng(3, Math.floor(i / 2), i % 2)));
    }
    const asked = rs.map((r) => Number(/gate;dur=[\d.]+;desc="(\d+) calls?"/.exec(h(r, "server-timing"))?.[1] ?? 0));
    assert.equal(
      asked.reduce((a, b) => a + b, 0),
      1,
      `one failed RPC, then the gate is left alone for a while (gate RPCs per request: ${asked})`,
    );
    // An outage now: the isolate's own breaker (threshold 3) opens, as it would with no gate.
    srv.outage("gateDown", 60_000);
    const before = srv.requests("gateDown");
    const failed = [];
    for (const x of [4, 5, 6, 7]) failed.push(await get(down, `http://down.test/tiles/3/${x}/0.png`));
    for (const r of failed) assert.equal(r.status, 503, r.text);
    const sent = srv.requests("gateDown") - before;
    assert.ok(sent <= 4, `the isolate's own breaker stopped the outage's load: ${sent} upstream requests for 4 tiles`);
    t.diagnostic(`gate down: 8 tiles 200 (gate RPCs ${asked}); then an outage: ${sent} upstream requests for 4 calls`);
  });
});

describe("examples/worker: the example runs from the packed tarball", () => {
  let mf;
  let missing;
  let tmp;
  const outbound = [];
  const runtime = runtimeOutput();
  before(async () => {
    // As a user gets it: the example's worker.js beside node_modules/tilefetch from `npm pack`.
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-example-"));
    const { project } = await installPacked(tmp, "tile-proxy");
    fs.copyFileSync(path.join(ROOT, "examples/worker/worker.js"), path.join(project, "worker.js"));
    const installed = path.join(project, "node_modules/tilefetch");
    const js = (p) => ({ type: "ESModule", path: path.join(installed, p) });
    const modules = [
      { type: "ESModule", path: path.join(project, "worker.js") },
      // "tilefetch/worker" as wrangler resolves it (the package's `exports`); workerd looks a bare
      // name up next to the importing module first
      { type: "ESModule", path: path.join(project, "tilefetch/worker"), contents: 'export * from "../node_modules/tilefetch/worker.js";' },
      js("worker.js"),
      ...fs
        .readdirSync(path.join(installed, "worker"))
        .filter((f) => f.endsWith(".js"))
        .map((f) => js(`worker/${f}`)),
      js("workerd.js"),
      js("gen/options.js"),
      js("gen/tilefetch_edge.js"),
      { type: "CompiledWasm", path: path.join(installed, "gen/tilefetch_edge_bg.wasm") },
    ];
    // wrangler.toml's [vars], as wrangler would bind them
    const vars = Object.fromEntries(
      fs
        .readFileSync(path.join(ROOT, "examples/worker/wrangler.toml"), "utf8")
        .split("\n")
        .map((l) => /^(UPSTREAM)\s*=\s*"(.*)"$/.exec(l.trim()))
        .filter(Boolean)
        .map((m) => [m[1], m[2]]),
    );
    assert.equal(vars.UPSTREAM, "https://{s}.tiles.example.com/{z}/{x}/{y}.png", "wrangler.toml's upstream");
    const base = {
      compatibilityDate: COMPATIBILITY_DATE, // examples/worker/wrangler.toml's
      handleRuntimeStdio: runtime.handle,
      modulesRoot: project,
      modules,
      durableObjects: { UPSTREAM_GATE: "UpstreamGate" },
      // stands for https://{a,b,c}.tiles.example.com: every tile request gets the tile it names
      outboundService: (request) => {
        outbound.push(request.url);
        const m = new URL(request.url).pathname.match(/^\/(\d+)\/(\d+)\/(\d+)\.png$/);
        return m ? new Response(tilePng(...m.slice(1).map(Number)), { headers: { "content-type": "image/png" } }) : new Response("no", { status: 404 });
      },
    };
    mf = new Miniflare({ ...base, bindings: { ...vars, TILE_API_KEY: "K3Y" } });
    missing = new Miniflare({ ...base, bindings: { ...vars } });
    await Promise.all([mf.ready, missing.ready]);
  });
  after(async () => {
    await mf?.dispose();
    await missing?.dispose();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test("tiles through the gate, the key upstream only, CORS, 400 past maxZoom", async (t) => {
    const r = await get(mf, "http://tiles.test/tiles/3/2/1.png", { headers: { origin: "https://map.example" } });
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.equals(tilePng(3, 2, 1)));
    assert.equal(h(r, "access-control-allow-origin"), "*");
    assert.match(h(r, "server-timing"), /gate;dur=/);
    assert.equal(outbound.length, 1);
    assert.match(outbound[0], /^https:\/\/[abc]\.tiles\.example\.com\/3\/2\/1\.png\?key=K3Y$/);
    assert.equal((await get(mf, "http://tiles.test/tiles/20/0/0.png")).status, 400, "maxZoom 19");
    t.diagnostic(`upstream request: ${outbound[0].replace("K3Y", "<key>")}; Server-Timing: ${h(r, "server-timing")}`);
  });

  test("without TILE_API_KEY: 500 saying what to set, nothing sent upstream", async () => {
    const sent = outbound.length;
    const r = await get(missing, "http://tiles.test/tiles/3/2/1.png");
    assert.equal(r.status, 500);
    assert.match(r.text, /TILE_API_KEY is not set: npx wrangler secret put TILE_API_KEY \(for wrangler dev: \.dev\.vars/);
    assert.equal(outbound.length, sent);
  });
});

describe("tilefetch/worker: an upstream's redirects are followed only where the config points", () => {
  let mf;
  let redirector;
  const runtime = runtimeOutput();
  const hits = []; // the redirector's requests, by path
  before(async () => {
    // An upstream that redirects (a hand-made stand-in: a static store sends these on demand).
    // /away/…: to the other ("evil") host; /same/…: to /real/… on itself, which serves the tile;
    // /loop/N/…: to /loop/N+1/… for ever.
    const http = await import("node:http");
    redirector = http.createServer((req, res) => {
      const url = new URL(req.url, "http://x");
      hits.push(url.pathname);
      const m = url.pathname.match(/(\d+)\/(\d+)\/(\d+)\.png$/);
      const [z, x, y] = m ? m.slice(1).map(Number) : [0, 0, 0];
      const status = Number(url.searchParams.get("code") ?? 302);
      const go = (location) => res.writeHead(status, { location }).end();
      if (url.pathname.startsWith("/away/")) return go(`${evil.url}/tile/${z}/${x}/${y}.png?run=${url.searchParams.get("run")}`);
      if (url.pathname.startsWith("/same/")) return go(`/real/${z}/${x}/${y}.png`);
      const loop = url.pathname.match(/^\/loop\/(\d+)\//);
      if (loop) return go(`/loop/${Number(loop[1]) + 1}/${z}/${x}/${y}.png`);
      if (url.pathname.startsWith("/real/")) return res.writeHead(200, { "content-type": "image/png" }).end(tilePng(z, x, y));
      res.writeHead(404).end();
    });
    await new Promise((resolve) => redirector.listen(0, "127.0.0.1", resolve));
    const base = `http://127.0.0.1:${redirector.address().port}`;
    const scenario = (name, config) => [name, { route: `/${name}/{z}/{x}/{y}.png`, ...FAST, deadlineMs: 2000, gate: false, ...config }];
    mf = new Miniflare(
      worker({
        handleRuntimeStdio: runtime.handle,
        bindings: {
          SCENARIOS: Object.fromEntries([
            ...[301, 302, 307, 308].map((code) => scenario(`away${code}`, { upstream: `${base}/away/{z}/{x}/{y}.png?code=${code}&run=redir-away` })),
            scenario("same", { upstream: `${base}/same/{z}/{x}/{y}.png` }),
            scenario("loop", { upstream: `${base}/loop/0/{z}/{x}/{y}.png` }),
            scenario("allowed", { upstream: `${base}/away/{z}/{x}/{y}.png?run=redir-allowed`, redirects: [evil.url] }),
          ]),
          DEFAULT: "same",
        },
      }),
    );
    await mf.ready;
  });
  after(async () => {
    await mf?.dispose();
    await new Promise((resolve) => (redirector ? redirector.close(resolve) : resolve()));
  });
  after(() => runtime.assertClean());

  test("to another host: not followed (that host receives nothing), an upstream error, not cached", async (t) => {
    for (const code of [301, 302, 307, 308]) {
      for (const round of [1, 2]) {
        const r = await get(mf, `http://proxy.test/away${code}/3/1/2.png`);
        assert.equal(r.status, 503, `${code}, round ${round}: ${r.text}`);
        assert.notEqual(h(r, "x-tilefetch-cache"), "hit", "not cached");
      }
    }
    const away = hits.filter((p) => p.startsWith("/away/")).length;
    t.diagnostic(`4 codes × 2 requests: ${away} upstream requests, ${evil.requests("redir-away")} to the other host`);
    assert.equal(away, 8, "one upstream request each: not retried, not served from the cache");
    assert.equal(evil.requests("redir-away"), 0, "the other host received no request");
  });

  test("on the upstream's own origin: followed, the tile delivered and cached", async () => {
    const r = await get(mf, "http://proxy.test/same/4/3/2.png");
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.equals(tilePng(4, 3, 2)));
    const again = await get(mf, "http://proxy.test/same/4/3/2.png");
    assert.ok(again.body.equals(tilePng(4, 3, 2)));
    assert.equal(h(again, "x-tilefetch-cache"), "hit");
  });

  test("more hops than MAX_REDIRECTS: not followed further", async () => {
    const before = hits.filter((p) => p.startsWith("/loop/")).length;
    const r = await get(mf, "http://proxy.test/loop/2/1/1.png");
    assert.equal(r.status, 503, r.text);
    assert.equal(hits.filter((p) => p.startsWith("/loop/")).length - before, MAX_REDIRECTS + 1);
  });

  test("to an origin in `redirects`: followed", async () => {
    const r = await get(mf, "http://proxy.test/allowed/2/1/3.png");
    assert.equal(r.status, 200, r.text);
    assert.ok(r.body.equals(tilePng(2, 1, 3)));
    assert.equal(evil.requests("redir-allowed"), 1);
  });
});
