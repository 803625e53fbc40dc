// fetchTile in Chromium, in a page and in a dedicated worker, against a tile server that sends no
// CORS headers (the fault server's `cors=0`, as MapServer's CGI and GeoServer ship): the call ends
// at once as kind "cors" with a message that names the way out, the host stays alive (breaker
// closed), later calls send one request each; a host that is down is still a network failure.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { blankPageSuite, failedLoadFrom, inWorker } from "./helpers.mjs";

const suite = blankPageSuite();
let downUrl; // a loopback port nothing listens on

before(async () => {
  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  downUrl = `http://127.0.0.1:${closed.address().port}`;
  await new Promise((resolve) => closed.close(resolve));
});

/** A blank page that expects the down host's refused connections in its console. */
function blankPage() {
  const down = failedLoadFrom(downUrl);
  return suite.blankPage((msg) => down(msg) || /net::ERR_CONNECTION_REFUSED/.test(msg.text()));
}

// Runs in the page or in the worker: three calls to the host without CORS (the first two at once,
// the third after them), then one to a host that is down; what each ended as, and the stats.
async function scenario({ urls, down }) {
  const { TileClient } = await import("/pkg/browser.js");
  const events = [];
  const client = new TileClient({ onEvent: (e) => events.push(e) });
  const call = async (url, options) => {
    const t0 = performance.now();
    try {
      const tile = await client.fetchTile(url, options);
      return { ok: true, attempts: tile.attempts, ms: performance.now() - t0 };
    } catch (e) {
      return { ok: false, name: e.name, kind: e.kind, message: e.message, attempts: e.attempts, causeKind: e.cause?.kind ?? null, ms: performance.now() - t0 };
    }
  };
  const first = await Promise.all([call(urls[0]), call(urls[1])]);
  const later = await call(urls[2]);
  const downCall = await call(down, { deadlineMs: 600, baseDelayMs: 10, maxDelayMs: 40 });
  const stats = client.stats();
  const host = Object.keys(stats).find((h) => urls[0].includes(h));
  return { first, later, down: downCall, stats: stats[host], corsEvents: events.filter((e) => e.type === "cors").length };
}

function check(t, r, run) {
  for (const c of [...r.first, r.later]) {
    assert.equal(c.ok, false, JSON.stringify(c));
    assert.deepEqual([c.name, c.kind, c.attempts], ["TileError", "cors", 1], JSON.stringify(c));
    assert.match(c.message, /without CORS headers/);
    for (const fix of ["Access-Control-Allow-Origin", "adapter", "tilefetch/worker"])
      assert.ok(c.message.includes(fix), `the message names ${fix}: ${c.message}`);
  }
  const first = suite.srv.requests(`${run}/4/1/1`) + suite.srv.requests(`${run}/4/1/2`);
  assert.ok(first <= 3, `the first two calls (at once) cost ${first} requests: one each and one shared check`);
  for (const key of ["4/1/1", "4/1/2"]) assert.ok(suite.srv.requests(`${run}/${key}`) <= 2, `${key}: at most 2 requests`);
  assert.equal(suite.srv.requests(`${run}/4/1/3`), 1, "a later call to the host sends one request");
  assert.equal(r.stats.corsRefused, true, "stats() shows the host without CORS");
  assert.equal(r.stats.breaker.state, "closed", "the breaker does not count it as down");
  assert.equal(r.corsEvents, 1, "one cors event");
  assert.notEqual(r.down.kind, "cors", JSON.stringify(r.down));
  assert.equal(r.down.kind === "network" || r.down.causeKind === "network", true, `a host that is down: ${JSON.stringify(r.down)}`);
  t.diagnostic(
    `first calls ${r.first.map((c) => Math.round(c.ms)).join(" / ")} ms (${first} requests for both), a later one ${Math.round(r.later.ms)} ms (1 request); down host: ${r.down.kind}`,
  );
}

const urlsOf = (run) => ({
  urls: ["4/1/1", "4/1/2", "4/1/3"].map((k) => `${suite.srv.url}/tile/${k}.png?run=${run}&cors=0`),
  down: `${downUrl}/tile/4/1/1.png`,
});

test("page: fetchTile on a server without CORS headers ends as kind cors, naming the fix", { timeout: 30_000 }, async (t) => {
  const run = "nocors-page";
  const page = await blankPage();
  const r = await page.evaluate(scenario, urlsOf(run));
  check(t, r, run);
  assert.deepEqual(page.problems(), []);
});

test("dedicated worker: fetchTile on a server without CORS headers ends as kind cors", { timeout: 30_000 }, async (t) => {
  const run = "nocors-worker";
  const page = await blankPage();
  const r = await inWorker(page, scenario, urlsOf(run), suite.web.url);
  check(t, r, run);
  assert.deepEqual(page.problems(), []);
});

test("page: the same server with CORS headers is unaffected (a tile, one request, corsRefused false)", { timeout: 30_000 }, async () => {
  const run = "cors-page";
  const page = await blankPage();
  const r = await page.evaluate(async (url) => {
    const { TileClient } = await import("/pkg/browser.js");
    const client = new TileClient();
    const tile = await client.fetchTile(url);
    return { attempts: tile.attempts, stats: Object.values(client.stats())[0] };
  }, `${suite.srv.url}/tile/4/2/1.png?run=${run}`);
  assert.equal(r.attempts, 1);
  assert.equal(r.stats.corsRefused, false);
  assert.equal(suite.srv.requests(run), 1);
});

// The adapters' loads (pkg/without-cors.js) with a `load` of the test's own that answers after
// 50 ms and records when it was called and whether with the first contact's `fetch`: two tiles
// at once of another origin, then two of the page's own.
test("adapters: another origin's tiles wait for its first contact, a second one when the first does not answer; the page's own origin's tiles do not", {
  timeout: 30_000,
}, async () => {
  const page = await blankPage();
  const r = await page.evaluate(async (otherOrigin) => {
    const { loadTile } = await import("/pkg/without-cors.js");
    const t0 = performance.now();
    const calls = [];
    // `hung`: the origin whose first tile never answers.
    const load = (url, _signal, extra) => {
      const origin = new URL(url).origin;
      const first = !calls.some((c) => c.origin === origin);
      calls.push({ origin, at: performance.now() - t0, firstContact: typeof extra?.fetch === "function" });
      const hangs = first && url.includes("hung");
      return new Promise((resolve) => (hangs ? null : setTimeout(() => resolve({ empty: false }), 50)));
    };
    const signal = new AbortController().signal;
    const three = (base) => Promise.all([1, 2, 3].map((y) => loadTile(load, `${base}/tile/4/1/${y}.png`, signal, {})));
    const hung = (base) => [1, 2, 3].map((y) => loadTile(load, `${base}/hung/4/1/${y}.png`, signal, {}));
    await three(otherOrigin);
    await Promise.all(hung("http://127.0.0.2:9").slice(1));
    await three(location.origin);
    return { calls, here: location.origin };
  }, "http://127.0.0.1:9");
  const of = (origin) => r.calls.filter((c) => c.origin === origin);
  const [other, hung, own] = [of("http://127.0.0.1:9"), of("http://127.0.0.2:9"), of(r.here)];
  assert.deepEqual(
    other.map((c) => c.firstContact),
    [true, false, false],
    `another origin: the first tile is the first contact, the others wait for it: ${JSON.stringify(other)}`,
  );
  assert.ok(other[1].at - other[0].at >= 45, `another origin: the second tile waited for the first: ${JSON.stringify(other)}`);
  assert.deepEqual(
    hung.map((c) => c.firstContact),
    [true, true, false],
    `an origin whose first tile hangs: a second first contact: ${JSON.stringify(hung)}`,
  );
  assert.ok(hung[1].at - hung[0].at >= 290, `the second contact waited for the first: ${JSON.stringify(hung)}`);
  assert.ok(hung[2].at - hung[1].at >= 45, `the third tile waited for the second contact's answer: ${JSON.stringify(hung)}`);
  assert.deepEqual(
    own.map((c) => c.firstContact),
    [false, false, false],
    `the page's origin: no first contact: ${JSON.stringify(own)}`,
  );
  assert.ok(own[2].at - own[0].at < 20, `the page's origin: every tile at once: ${JSON.stringify(own)}`);
  assert.deepEqual(page.problems(), []);
});
