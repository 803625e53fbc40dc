// A module service worker in Chromium (fixtures/sw/sw.js, the README's offline recipe): it
// imports the package's browser entry (no top-level await, or registration fails), answers the
// page's tile requests through fetchTile over a flaky loopback server, keeps each tile in Cache
// Storage, and serves the kept copies while the server is down.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { ROOT, assertBuilt, startStaticServer, launchBrowser, newCheckedPage, failedLoadFrom, pageResults } from "./helpers.mjs";

let srv;
let web;
let browser;
before(async () => {
  assertBuilt();
  srv = await startFaultServer({ seed: 1 });
  web = await startStaticServer(ROOT, { allow: ["/pkg/", "/tests/browser/fixtures/"] });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await web?.close();
  await srv?.close();
});

const tiles = [];
for (let x = 0; x < 4; x++) for (let y = 0; y < 4; y++) tiles.push([4, x, y]);

test("module service worker: tiles through fetchTile over a flaky server, then offline from Cache Storage", { timeout: 60_000 }, async (t) => {
  const run = "sw";
  const upstream = `${srv.url}/tile/{z}/{x}/{y}.png?run=${run}&f=503&p=0.3`;
  // Expected: the fault server's 503s, and the worker's own 503 for the tile it never had.
  const fromServer = failedLoadFrom(srv.url);
  const fromWorker = failedLoadFrom(`${web.url}/tests/browser/fixtures/sw/tiles`);
  const page = await newCheckedPage(browser, { expectedConsoleError: (msg) => fromServer(msg) || fromWorker(msg) });
  try {
    await page.goto(`${web.url}/tests/browser/fixtures/sw/index.html?${new URLSearchParams({ upstream })}`);
    const registered = await pageResults(page);
    assert.equal(registered.error, undefined, `registration failed: ${registered.error}\n${page.problems().join("\n")}`);
    assert.equal(registered.controlled, true);

    const online = await page.evaluate((list) => window.__tiles(list), tiles);
    online.forEach((r, i) => {
      assert.equal(r.status, 200, `${tiles[i]}: ${JSON.stringify(r).slice(0, 200)}`);
      assert.equal(r.source, "network");
      assert.equal(r.hex, tilePng(...tiles[i]).toString("hex"), `${tiles[i]}: the true bytes`);
    });
    const requests = srv.requests(run);
    assert.ok(requests > tiles.length, `some 503s were retried inside the worker (${requests} requests)`);

    // The server goes down: the worker's fetchTile gives up within its deadline, and the kept
    // copies are served.
    srv.outage(run, 60_000);
    const offline = await page.evaluate((list) => window.__tiles(list), tiles);
    offline.forEach((r, i) => {
      assert.equal(r.status, 200, `${tiles[i]} offline: ${JSON.stringify(r).slice(0, 200)}`);
      assert.equal(r.source, "cache");
      assert.equal(r.hex, tilePng(...tiles[i]).toString("hex"), `${tiles[i]}: the kept bytes`);
    });
    // A tile never seen before has no copy: the worker answers 503, not an error body as a tile.
    const [unseen] = await page.evaluate((list) => window.__tiles(list), [[4, 9, 9]]);
    assert.equal(unseen.status, 503);
    assert.equal(unseen.source, "none");
    t.diagnostic(
      `${tiles.length} tiles online (${requests} upstream requests, 30 % 503), then all ${tiles.length} from Cache Storage during the outage; an unseen tile: 503 (${unseen.error})`,
    );
    assert.deepEqual(page.problems(), [], "no unexpected page, worker or console errors");
  } finally {
    await page.closeContext();
  }
});
