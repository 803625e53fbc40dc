// tilefetch/maplibre in headless Chromium (WebGL through SwiftShader) with the real MapLibre GL
// JS from npm: maplibregl.addProtocol("tilefetch", createProtocol(...)) and a raster source whose
// tiles are tilefetch://http://127.0.0.1:PORT/tile/{z}/{x}/{y}.png, against the fault server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setUp, scenarios } from "./adapters-common.mjs";

let env;
before(async () => {
  env = await setUp("maplibre", { webgl: true });
});
after(async () => {
  await env?.close();
});

const s = scenarios(() => env, { name: "maplibre" });

test("createProtocol: 30 % 503s, every tile of the view loads and is drawn", { timeout: 30_000 }, (t) => s.flaky503(t));
test("createProtocol: 429 + Retry-After, every tile loads after the pause", { timeout: 30_000 }, (t) => s.retryAfter429(t));
test("createProtocol: 404 tiles end errored within 200 ms, requested once", { timeout: 30_000 }, (t) =>
  s.notFound(t, {
    check(r, tile) {
      assert.equal(r.isTileError, true, `${tile.key}: the protocol rejects with the TileError`);
      assert.equal(r.status, 404, "MapLibre reads `status`: 404 means no tile here");
      assert.equal(r.lib, "errored", `${tile.key}: MapLibre's tile state`);
    },
  }),
);
test("createProtocol: panning away aborts slow, queued and sleeping tiles", { timeout: 30_000 }, (t) => s.panAborts(t));
