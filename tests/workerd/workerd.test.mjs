// The built package's workerd entry (pkg/workerd.js: the .wasm imported as a CompiledWasm module,
// initSync at import) in Cloudflare's workerd runtime, through Miniflare. The worker
// (fixtures/worker.mjs) fetches tiles from the fault server on 127.0.0.1: Miniflare's default
// outbound "internet" service allows ["public", "private", "240.0.0.0/4"], and "private" is a
// superset of "local" (127.0.0.0/8), so no outboundService is needed.
//
// Run under two compatibility dates: an older one (2024-09-23) and a recent one that this
// Miniflare/workerd (4.20260426.0) accepts.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { Miniflare } from "miniflare";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { ROOT, WORKERD_WASM, workerdModules } from "./modules.mjs";

const COMPATIBILITY_DATES = ["2024-09-23", "2026-04-01"];
const FAST = { baseDelayMs: 10, maxDelayMs: 40 };

let srv;
before(async () => {
  assert.ok(fs.existsSync(WORKERD_WASM), `${WORKERD_WASM} is missing: build the wasm package first`);
  srv = await startFaultServer({ seed: 1 });
});
after(async () => {
  await srv?.close();
});

const tile = (run, [z, x, y], q = "") => `${srv.url}/tile/${z}/${x}/${y}.png?run=${run}${q}`;

for (const compatibilityDate of COMPATIBILITY_DATES) {
  describe(`workerd, compatibilityDate ${compatibilityDate}`, () => {
    const runOf = (name) => `${compatibilityDate}-${name}`; // fault-server keys unique per block
    let mf;
    before(async () => {
      mf = new Miniflare({
        compatibilityDate,
        // Requests that share a client wake one another's calls; before 2024-10-14 workerd runs
        // such a continuation in the waking request unless this flag is set (README: workerd).
        compatibilityFlags: compatibilityDate < "2024-10-14" ? ["handle_cross_request_promise_resolution"] : [],
        modulesRoot: ROOT, // module names are repo-relative, so the fixture's relative imports line up
        modules: workerdModules("tests/workerd/fixtures/worker.mjs"),
      });
      await mf.ready;
    });
    after(async () => {
      await mf?.dispose();
    });

    /** Asks the worker to fetchTile(url, opts); returns its JSON answer. */
    async function viaWorker(url, opts, extra = {}) {
      const q = new URLSearchParams({ url, ...extra });
      if (opts) q.set("opts", JSON.stringify(opts));
      const res = await mf.dispatchFetch(`http://worker.test/?${q}`);
      const text = await res.text();
      assert.equal(res.status, 200, `worker answered ${res.status}: ${text}`);
      return JSON.parse(text);
    }

    test("a healthy tile: 200, the true bytes, 1 attempt", async () => {
      const run = runOf("ok");
      const xyz = [3, 1, 2];
      const r = await viaWorker(tile(run, xyz));
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.status, 200);
      assert.equal(r.isUint8Array, true);
      assert.equal(r.length, tilePng(...xyz).length);
      assert.equal(r.hex, tilePng(...xyz).toString("hex"));
      assert.equal(r.contentType, "image/png");
      assert.equal(r.empty, false);
      assert.equal(r.attempts, 1);
      assert.equal(srv.requests(run), 1);
    });

    test("503 n=2 with small delays: resolves on attempt 3", async () => {
      const run = runOf("flaky");
      const xyz = [4, 2, 2];
      const r = await viaWorker(tile(run, xyz, "&f=503&n=2"), FAST);
      assert.equal(r.ok, true, JSON.stringify(r));
      assert.equal(r.attempts, 3);
      assert.equal(r.hex, tilePng(...xyz).toString("hex"));
      assert.equal(srv.requests(run), 3);
    });

    test("404: TileError kind http, not retried", async () => {
      const run = runOf("nf");
      const r = await viaWorker(tile(run, [4, 2, 3], "&f=404"), FAST);
      assert.equal(r.ok, false, JSON.stringify(r));
      assert.equal(r.error, "http", r.message);
      assert.equal(r.status, 404);
      assert.equal(r.attempts, 1);
      assert.equal(r.name, "TileError");
      assert.equal(r.instanceofTileError, true, "instanceof the TileError exported by pkg/workerd.js");
      assert.equal(srv.requests(run), 1);
    });

    test("a hanging server: attemptTimeoutMs 200, deadlineMs 500 → kind deadline", async () => {
      const run = runOf("hang");
      const t0 = performance.now();
      const r = await viaWorker(tile(run, [4, 2, 5], "&f=hang"), { ...FAST, attemptTimeoutMs: 200, deadlineMs: 500 });
      const wall = performance.now() - t0;
      assert.equal(r.ok, false, JSON.stringify(r));
      assert.equal(r.error, "deadline", r.message);
      assert.ok(r.attempts >= 2, `attempts ${r.attempts}: each attempt timed out after 200 ms and was retried`);
      assert.ok(wall < 2500, `settled near the deadline, took ${wall.toFixed(0)} ms`);
      assert.equal(srv.requests(run), r.attempts);
      // Each timed-out attempt's request is really aborted (the server sees the client go away).
      for (const end = performance.now() + 2000; srv.aborted(run) < r.attempts && performance.now() < end; ) {
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      assert.equal(srv.aborted(run), r.attempts, "every hanging request was aborted");
    });

    // One client shared by concurrent requests: a call resumed by another request's call (a
    // place handed over in the queue, a coalesced flight, a breaker probe's outcome) must do its
    // I/O in its own request, or workerd refuses it ("Cannot perform I/O on behalf of a different
    // request") and cancels it when the other request ends.
    test("one TileClient shared by requests: queued calls handed their place by another request", async () => {
      const run = runOf("shared-queue");
      const tiles = [0, 1, 2, 3, 4].map((i) => [5, i, 7]);
      const config = JSON.stringify({ maxConcurrent: 1 });
      const results = await Promise.all(
        tiles.map((xyz, i) => viaWorker(tile(run, xyz, "&delay=60"), FAST, { client: "shared", config, ...(i === 0 ? { reset: "1" } : {}) })),
      );
      for (const [i, r] of results.entries()) {
        assert.equal(r.ok, true, `request ${i}: ${JSON.stringify(r)}`);
        assert.equal(r.hex, tilePng(...tiles[i]).toString("hex"));
      }
      assert.equal(srv.requests(run), tiles.length);
      // One call at a time: each request arrived after the one before it had been answered. Read
      // from arrival and end times rather than the server's peak count: the next request can arrive
      // (workerd is another process) before the server has seen the previous response finish,
      // which counted two at once in one clean-clone run. Unqueued calls would overlap by the
      // 60 ms each answer takes, far beyond the 20 ms allowed here.
      const served = srv.log.filter((e) => e.key.startsWith(`${run}/`)).sort((a, b) => a.t - b.t);
      for (let i = 1; i < served.length; i++) {
        assert.ok(
          served[i].t >= served[i - 1].tDone - 20,
          `one call at a time: request ${i} arrived ${Math.round(served[i - 1].tDone - served[i].t)} ms before the one before it ended`,
        );
      }
      // The isolate still serves after the requests that shared the client have ended.
      const after = await viaWorker(tile(run, [5, 9, 7]), FAST, { client: "shared" });
      assert.equal(after.ok, true, JSON.stringify(after));
    });

    test("one TileClient shared by requests: identical calls from two requests share one flight", async () => {
      const run = runOf("shared-flight");
      const xyz = [5, 1, 8];
      const config = JSON.stringify({});
      const first = viaWorker(tile(run, xyz, "&delay=150"), FAST, { client: "shared", config, reset: "1" });
      await new Promise((resolve) => setTimeout(resolve, 50));
      const second = viaWorker(tile(run, xyz, "&delay=150"), FAST, { client: "shared" });
      const results = await Promise.all([first, second]);
      for (const [i, r] of results.entries()) {
        assert.equal(r.ok, true, `request ${i}: ${JSON.stringify(r)}`);
        assert.equal(r.hex, tilePng(...xyz).toString("hex"));
      }
      assert.ok(srv.requests(run) <= 2, `${srv.requests(run)} upstream requests for one tile`);
      const after = await viaWorker(tile(run, [5, 9, 8]), FAST, { client: "shared" });
      assert.equal(after.ok, true, JSON.stringify(after));
    });

    test("one TileClient shared by requests: calls waiting for a breaker probe resume in their own request", async () => {
      const run = runOf("shared-probe");
      const config = JSON.stringify({ breaker: { failureThreshold: 2, openMs: 200, maxOpenMs: 200, halfOpenProbes: 1 } });
      // Two failures open the breaker; then the upstream recovers.
      const opts = { ...FAST, deadlineMs: 3000 };
      await viaWorker(tile(run, [5, 2, 0], "&f=503&n=2"), { ...opts, deadlineMs: 200 }, { client: "shared", config, reset: "1" });
      const results = await Promise.all([1, 2, 3, 4].map((i) => viaWorker(tile(run, [5, 2, i], "&delay=40"), opts, { client: "shared" })));
      for (const [i, r] of results.entries()) {
        assert.equal(r.ok, true, `request ${i}: ${JSON.stringify(r)}`);
        assert.equal(r.hex, tilePng(5, 2, i + 1).toString("hex"));
      }
      const after = await viaWorker(tile(run, [5, 2, 9]), FAST, { client: "shared" });
      assert.equal(after.ok, true, JSON.stringify(after));
    });

    test("cache: no-store works where workerd implements it, else invalid-options at once", async () => {
      const run = runOf("cache");
      const t0 = performance.now();
      const r = await viaWorker(tile(run, [4, 2, 6]), { ...FAST, cache: "no-store" });
      const wall = performance.now() - t0;
      if (r.ok) {
        assert.equal(r.attempts, 1);
        assert.equal(srv.requests(run), 1);
      } else {
        // Older compatibility dates refuse the field when the Request is built: that is the
        // caller's error, reported at once, not a network failure retried until the deadline.
        assert.equal(compatibilityDate, "2024-09-23", r.message);
        assert.equal(r.error, "invalid-options", r.message);
        assert.match(r.message, /invalid `cache`/);
        assert.equal(r.attempts, 0);
        assert.equal(srv.requests(run), 0);
        assert.ok(wall < 1000, `rejected at once, took ${wall.toFixed(0)} ms`);
      }
    });
  });
}
