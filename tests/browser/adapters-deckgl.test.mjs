// tilefetch/deckgl in headless Chromium with the real deck.gl 9 from npm (@deck.gl/core, layers,
// geo-layers; WebGL through SwiftShader): a TileLayer whose getTileData is createGetTileData(),
// against the loopback fault server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setUp, scenarios } from "./adapters-common.mjs";

let env;
before(async () => {
  env = await setUp("deckgl", { webgl: true });
});
after(async () => {
  await env?.close();
});

const s = scenarios(() => env, { name: "deckgl" });

test("the page runs deck.gl 9", { timeout: 30_000 }, (t) => s.version(t, () => window.__deckVersion, /^9\./));
test("createGetTileData: healthy, every tile of the view loads and is drawn, one request per tile", { timeout: 40_000 }, (t) => s.healthy(t));
test("createGetTileData: tiles typed application/octet-stream are known by their bytes, decoded and drawn", { timeout: 40_000 }, async (t) => {
  await s.load(t, "deckgl-untyped", "", "untyped", {}, { page: { untyped: true } });
});
test("createGetTileData: 30 % 503s, every tile of the view loads and is drawn", { timeout: 30_000 }, (t) => s.flaky503(t));
test("createGetTileData: 429 + Retry-After, every tile loads after the pause", { timeout: 30_000 }, (t) => s.retryAfter429(t));
test("createGetTileData: a ServiceException served with 200, retried, every tile drawn", { timeout: 30_000 }, (t) => s.serviceException(t));
test("createGetTileData: first requests hang, the attempt timeout ends them, every tile drawn", { timeout: 30_000 }, (t) => s.hangs(t));
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

// deck.gl's own loader fails on a server without CORS headers too.
test("createGetTileData, server without CORS headers: each tile errors as kind cors", { timeout: 40_000 }, (t) => s.corsErrors(t));
