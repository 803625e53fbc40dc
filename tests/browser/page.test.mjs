// The built package (pkg/browser.js: top-level await + streaming compile of the .wasm) in
// Chromium: a page using native ES modules and an import map, and a dedicated module Worker.
// Needs Debian's /usr/bin/chromium and a built pkg/gen/.
import { test, before, after, afterEach } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { ROOT, assertBuilt, startStaticServer, launchBrowser, newCheckedPage, failedLoadFrom, pageResults, screenshot } from "./helpers.mjs";

let srv;
let web;
let browser;
const pages = new Set();

before(async () => {
  assertBuilt();
  srv = await startFaultServer({ seed: 1 });
  web = await startStaticServer(ROOT, { allow: ["/pkg/", "/tests/browser/fixtures/", "/node_modules/"] });
  browser = await launchBrowser();
});
afterEach(async () => {
  for (const page of pages) await page.closeContext().catch(() => {});
  pages.clear();
});
after(async () => {
  await browser?.close();
  await web?.close();
  await srv?.close();
});

async function open(fixture, run) {
  const page = await newCheckedPage(browser, { expectedConsoleError: failedLoadFrom(srv.url) });
  pages.add(page);
  const q = new URLSearchParams({ server: srv.url, run });
  await page.goto(`${web.url}/tests/browser/fixtures/${fixture}?${q}`);
  return page;
}

function assertDelivered(r, [z, x, y], { attempts }) {
  assert.ok(r.ok, `expected a tile, got ${JSON.stringify(r)}`);
  const truth = tilePng(z, x, y);
  assert.equal(r.isUint8Array, true, "data is a Uint8Array");
  assert.equal(r.length, truth.length, "byte length");
  assert.equal(r.head, truth.subarray(0, 16).toString("hex"), "first 16 bytes");
  assert.equal(r.tail, truth.subarray(truth.length - 16).toString("hex"), "last 16 bytes");
  assert.equal(r.hex, truth.toString("hex"), "every byte");
  assert.equal(r.status, 200);
  assert.equal(r.contentType, "image/png");
  assert.equal(r.headersIsHeaders, true, "headers is a Headers");
  assert.equal(r.empty, false);
  assert.equal(r.attempts, attempts, "attempts");
  assert.equal(r.faultAttempt, String(attempts), "the delivered response was the server's last one");
}

function assertHttp404(r) {
  assert.equal(r.ok, false, `expected a rejection, got ${JSON.stringify(r)}`);
  assert.equal(r.instanceofTileError, true, "instanceof TileError");
  assert.equal(r.instanceofError, true, "instanceof Error");
  assert.equal(r.name, "TileError");
  assert.equal(r.kind, "http");
  assert.equal(r.status, 404);
  assert.equal(r.attempts, 1, "a 404 is not retried");
  assert.equal(r.errUrl, r.url);
}

test('page: import map + `import { fetchTile, TileError } from "tilefetch"`', { timeout: 30_000 }, async () => {
  const run = "page";
  const page = await open("page.html", run);
  const results = await pageResults(page);
  await screenshot(page, "browser-page");
  assert.equal(results.error, undefined, `the page failed: ${results.error}\n${page.problems().join("\n")}`);

  const { cases } = results;
  assertDelivered(cases.healthy, [3, 1, 2], { attempts: 1 });
  assertDelivered(cases.flaky, [4, 2, 2], { attempts: 3 });
  assertDelivered(cases.serviceException, [4, 2, 4], { attempts: 2 });
  assertHttp404(cases.notFound);
  assert.equal(results.tileErrorName, "TileError");
  assert.equal(results.tileErrorIsErrorSubclass, true);

  assert.equal(srv.requests(`${run}/3/1/2`), 1);
  assert.equal(srv.requests(`${run}/4/2/2`), 3);
  assert.equal(srv.requests(`${run}/4/2/4`), 2);
  assert.equal(srv.requests(`${run}/4/2/3`), 1);
  assert.ok(web.served.includes("/pkg/gen/tilefetch_bg.wasm"), `the .wasm was fetched: ${web.served.join(", ")}`);
  assertBrowsersOwnUserAgent(run);
  assert.deepEqual(page.problems(), [], "no unexpected page errors or console errors");
});

/** In a browser tilefetch sets no User-Agent (it would force a preflight): the browser's own goes. */
function assertBrowsersOwnUserAgent(run) {
  const agents = new Set(srv.log.filter((e) => e.key.startsWith(`${run}/`) && e.method === "GET").map((e) => e.headers["user-agent"]));
  assert.equal(agents.size, 1, [...agents].join(" | "));
  assert.match([...agents][0], /^Mozilla\/5\.0 .*Chrome\//);
}

test('dedicated module Worker: import "/pkg/browser.js" by path', { timeout: 30_000 }, async () => {
  const run = "worker";
  const page = await open("worker.html", run);
  const results = await pageResults(page);
  await screenshot(page, "browser-worker");
  assert.equal(results.error, undefined, `the worker failed: ${results.error}\n${page.problems().join("\n")}`);

  assert.equal(results.inWorker, true, "ran in a WorkerGlobalScope");
  assertDelivered(results.cases.healthy, [5, 3, 4], { attempts: 1 });
  assertDelivered(results.cases.flaky, [5, 3, 5], { attempts: 3 });
  assertHttp404(results.cases.notFound);
  assert.equal(srv.requests(run), 1 + 3 + 1);
  assertBrowsersOwnUserAgent(run);
  assert.deepEqual(page.problems(), [], "no unexpected page, worker or console errors");
});

test("calls made at import wait for the module inside their own deadline, the default client's having sent their first request; a module that cannot load is each call's TileError", {
  timeout: 30_000,
}, async () => {
  const run = "lazy";
  // The .wasm arrives 400 ms late, so every call below is made well before the module is ready.
  const page = await newCheckedPage(browser, { expectedConsoleError: failedLoadFrom(srv.url) });
  pages.add(page);
  await page.route("**/tilefetch_bg.wasm", async (route) => {
    await new Promise((resolve) => setTimeout(resolve, 400));
    await route.continue();
  });
  await page.goto(`${web.url}/tests/browser/fixtures/lazy.html?${new URLSearchParams({ server: srv.url, run })}`);
  const results = await pageResults(page);
  assert.equal(results.error, undefined, results.error);
  assert.equal(results.statsAtImport, "{}", "stats() before the module is ready");
  for (const name of ["early", "viaClient"]) {
    const r = results[name];
    assert.equal(r.ok, true, `${name}: ${JSON.stringify(r)}`);
    assert.equal(r.attempts, 1);
    // elapsedMs counts from the call: the wait for the module is in it.
    assert.ok(r.elapsedMs >= 400, `${name}: elapsedMs ${r.elapsedMs} includes the 400 ms wait for the module`);
  }
  // A deadline shorter than the wait runs out inside it: its request, sent at the call, is
  // aborted at the deadline, before the answer.
  assert.deepEqual([results.short.ok, results.short.kind, results.short.attempts], [false, "deadline", 0], JSON.stringify(results.short));
  assert.equal(srv.requests(`${run}/2/3/3`), 1);
  assert.equal(srv.aborted(`${run}/2/3/3`), 1, "the early request of a call past its deadline is aborted");
  // The default client's calls send their first request at the call, before the module is
  // ready (its answer is the first attempt's: one request each); a start jitter waits for the
  // module, and so does a TileClient's call.
  for (const name of ["early", "withFields"]) {
    assert.ok(
      results.sent[name] !== null && results.sent[name] < results.readyAt - 200,
      `${name} sent at ${results.sent[name]} ms, the module ready at ${results.readyAt} ms`,
    );
  }
  assert.equal(results.withFields.ok, true, JSON.stringify(results.withFields));
  assert.equal(results.withFields.attempts, 1);
  assert.equal(srv.requests(`${run}/2/1/1`), 1, "the early request is the first attempt, not one more");
  assert.equal(srv.requests(`${run}/2/0/1`), 1);
  assert.equal(srv.log.find((e) => e.key === `${run}/2/0/1`)?.headers?.["accept-language"], "fr", "the early request sent the call's headers");
  for (const name of ["jittered", "viaClient"]) {
    assert.ok(results.sent[name] > results.readyAt - 50, `${name} sent at ${results.sent[name]} ms, the module ready at ${results.readyAt} ms`);
  }
  assert.deepEqual([results.jittered.ok, results.jittered.attempts], [true, 1], JSON.stringify(results.jittered));
  // A call aborted while it waits for the module: its early request is aborted too.
  assert.deepEqual([results.aborted.ok, results.aborted.kind], [false, "aborted"], JSON.stringify(results.aborted));
  assert.equal(srv.aborted(`${run}/2/1/3`), 1, "the early request of an aborted call is aborted");
  assert.equal(results.threwAtImport, null, "a config is checked once the module is ready");
  assert.equal(results.refusedCall.kind, "invalid-options");
  assert.match(results.refusedCall.message, /maxConcurent/);
  assert.equal(srv.requests(`${run}/2/2/2`), 0, "the refused client sent nothing");
  for (const name of ["freedEarly", "freedLate"]) {
    const r = results[name];
    assert.deepEqual([r.ok, r.isTileError, r.kind], [false, true, "invalid-options"], `${name}: ${JSON.stringify(r)}`);
  }
  assert.equal(srv.requests(`${run}/2/0/3`), 0, "a client freed before the module was ready sent nothing");
  assert.deepEqual(page.problems(), []);

  // The same page when the .wasm cannot be had: every call rejects with a TileError saying so.
  const blocked = await newCheckedPage(browser, { expectedConsoleError: () => true });
  pages.add(blocked);
  await blocked.route("**/tilefetch_bg.wasm", (route) => route.abort("connectionrefused"));
  await blocked.goto(`${web.url}/tests/browser/fixtures/lazy.html?${new URLSearchParams({ server: srv.url, run: "lazy-blocked" })}`);
  const failed = await pageResults(blocked);
  assert.equal(failed.error, undefined, `no unhandled rejection: ${failed.error}`);
  for (const name of ["early", "viaClient", "refusedCall"]) {
    const r = failed[name];
    assert.deepEqual([r.ok, r.isTileError, r.name, r.kind, r.attempts], [false, true, "TileError", "network", 0], `${name}: ${JSON.stringify(r)}`);
    assert.match(r.message, /could not load its WebAssembly module/);
  }
  // At most what the default client's calls sent at once (early, short, withFields and aborted;
  // not the jittered one nor a TileClient's), aborted when the module failed: none more.
  assert.ok(srv.requests("lazy-blocked") <= 4, `${srv.requests("lazy-blocked")} requests`);
  assert.deepEqual(
    blocked.problems().filter((p) => p.startsWith("pageerror")),
    [],
    "nothing thrown at import",
  );
});

test("the static server: MIME types and what it refuses", async () => {
  const get = (p) => fetch(`${web.url}${p}`);
  const types = {
    "/pkg/browser.js": "text/javascript; charset=utf-8",
    "/pkg/gen/tilefetch_bg.wasm": "application/wasm",
    "/pkg/package.json": "application/json; charset=utf-8",
    "/tests/browser/fixtures/page.html": "text/html; charset=utf-8",
    "/tests/browser/fixtures/worker.mjs": "text/javascript; charset=utf-8",
  };
  for (const [p, type] of Object.entries(types)) {
    const res = await get(p);
    await res.arrayBuffer();
    assert.equal(res.status, 200, p);
    assert.equal(res.headers.get("content-type"), type, p);
  }
  for (const p of [
    "/package.json",
    "/src/lib.rs",
    "/tests/browser/helpers.mjs",
    "/pkg/",
    "/pkg/../package.json",
    "/pkg/%2e%2e/package.json",
    "/pkg/gen/%2e%2e%2f%2e%2e%2fpackage.json",
    "/pkg/..%5c..%5cpackage.json",
    "/pkg/missing.js",
  ]) {
    assert.equal(await rawStatus(p), 404, p); // sent verbatim: fetch() would normalise the dots
  }
});

/** GET with the request target sent byte for byte. */
function rawStatus(target) {
  return new Promise((resolve, reject) => {
    const req = http.get(`${web.url}/`, { path: target, agent: false }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
  });
}

test("page: a hedge of a hung tile goes out at its delay, not behind Chromium's HTTP cache lock", { timeout: 30_000 }, async () => {
  // Chromium's HTTP cache holds a second request for a URL behind the first until that one's
  // headers arrive; the first one here never answers. The hedge goes past that cache.
  const run = "hedge-lock";
  const page = await open("blank.html", run);
  const url = `${srv.url}/tile/5/3/3.png?run=${run}&f=hang&n=1`;
  const r = await page.evaluate(async (u) => {
    const { TileClient } = await import("/pkg/browser.js");
    const client = new TileClient({ hedge: 300 });
    const t0 = performance.now();
    const tile = await client.fetchTile(u);
    return { ms: performance.now() - t0, attempts: tile.attempts, stats: Object.values(client.stats())[0] };
  }, url);
  const log = srv.log.filter((e) => e.key === `${run}/5/3/3`);
  assert.equal(log.length, 2, "the hung request and its hedge");
  const gap = log[1].t - log[0].t;
  assert.ok(gap >= 250 && gap < 1500, `the hedge reached the server ${Math.round(gap)} ms after the hung request (hedge: 300)`);
  assert.equal(r.stats.hedgesWon, 1);
  assert.ok(r.ms < 2000, `the tile after ${Math.round(r.ms)} ms, not the 4 s attempt timeout`);
});
