// tilefetch/deckgl in headless Chromium with the real deck.gl 9 from npm (@deck.gl/core, layers,
// geo-layers; WebGL through SwiftShader): a TileLayer whose getTileData is createGetTileData(),
// against the loopback fault server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setUp, scenarios, viewTiles, waitSettled } from "./adapters-common.mjs";

let env;
before(async () => {
  env = await setUp("deckgl", { webgl: true });
});
after(async () => {
  await env?.close();
});

const s = scenarios(() => env, { name: "deckgl" });

test("the page runs deck.gl 9", { timeout: 30_000 }, async (t) => {
  const page = await env.open();
  try {
    const version = await page.evaluate(() => window.__deckVersion);
    assert.match(version, /^9\./);
    t.diagnostic(`deck.gl ${version}`);
  } finally {
    await page.closeContext();
  }
});

test("createGetTileData: healthy, every tile of the view loads and is drawn, one request per tile", { timeout: 40_000 }, async (t) => {
  const { requests, asked, hedges } = await s.load(t, "deckgl-healthy", "", "healthy");
  // One request per tile, and at most one more per hedge the client sent beside an attempt slow to
  // answer (here: while the page's main thread was busy; a hedge still queued in the browser when
  // its attempt answers never reaches the server).
  assert.ok(requests >= asked && requests <= asked + hedges, `${requests} requests for ${asked} tiles, ${hedges} hedges`);
});
test("createGetTileData: tiles typed application/octet-stream are known by their bytes, decoded and drawn", { timeout: 40_000 }, async (t) => {
  await s.load(t, "deckgl-untyped", "", "untyped", {}, { page: { untyped: true } });
});
test("createGetTileData: 30 % 503s, every tile of the view loads and is drawn", { timeout: 30_000 }, (t) => s.flaky503(t));
test("createGetTileData: 429 + Retry-After, every tile loads after the pause", { timeout: 30_000 }, (t) => s.retryAfter429(t));
test("createGetTileData: a ServiceException served with 200, retried, every tile drawn", { timeout: 30_000 }, async (t) => {
  const run = "deckgl-sexml";
  await s.load(t, run, "f=sexml&n=1", "service-exception");
  assert.ok(env.srv.requests(run) >= 2 * viewTiles(3, [1024, 768]).length, "each tile: the exception, then the tile");
});
test("createGetTileData: first requests hang, the attempt timeout ends them, every tile drawn", { timeout: 30_000 }, async (t) => {
  await s.load(t, "deckgl-hang", "f=hang&n=1", "hang", { attemptTimeoutMs: 800, deadlineMs: 8000 });
});
test("createGetTileData: 404 tiles end as onTileError's TileError within 200 ms, requested once", { timeout: 30_000 }, (t) =>
  s.notFound(t, {
    check(r, tile) {
      assert.equal(r.isTileError, true, `${tile.key}: getTileData rejects with the TileError`);
      assert.equal(r.kind, "http");
      assert.equal(r.status, 404);
    },
  }),
);
test("createGetTileData: panning away aborts slow, queued and sleeping tiles", { timeout: 30_000 }, (t) => s.panAborts(t));

// WebGL draws no image its page cannot read, whoever loads it: deck.gl's own loader fails on a
// server without CORS headers too. Each tile's error says why.
test("createGetTileData, server without CORS headers: each tile errors as kind cors", { timeout: 40_000 }, async (t) => {
  const run = "deckgl-nocors";
  const page = await env.open();
  try {
    const zoom = 3;
    const center = [1024, 768];
    const tiles = viewTiles(zoom, center);
    await page.evaluate((spec) => window.harness.create(spec), { template: `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}&cors=0`, zoom, center });
    const states = await waitSettled(
      page,
      tiles.map((x) => x.key),
    );
    for (const tile of tiles)
      assert.deepEqual([states[tile.key].state, states[tile.key].kind], ["error", "cors"], `${tile.key}: ${JSON.stringify(states[tile.key])}`);
    const requests = env.srv.requests(run);
    t.diagnostic(`${tiles.length} tiles in view, ${requests} requests`);
  } finally {
    await page.closeContext();
  }
});
