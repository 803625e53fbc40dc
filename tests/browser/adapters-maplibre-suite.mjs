// The MapLibre adapter's tests, for each MapLibre GL major the adapter supports (not a test file
// itself: adapters-maplibre.test.mjs runs them on MapLibre GL 5, adapters-maplibre6.test.mjs on 6).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setUp, scenarios } from "./adapters-common.mjs";

/** The tests over the page `entry` (fixtures/adapters/<entry>.html), which runs MapLibre GL `major`. */
export function maplibreTests(entry, major) {
  let env;
  before(async () => {
    env = await setUp(entry, { webgl: true });
  });
  after(async () => {
    await env?.close();
  });

  const s = scenarios(() => env, { name: "maplibre" });

  test(`the page runs MapLibre GL ${major}`, { timeout: 30_000 }, (t) => s.version(t, () => window.__maplibreVersion, new RegExp(`^${major}\\.`)));

  test("createProtocol: 30 % 503s, every tile of the view loads, reaches MapLibre decoded and is drawn", { timeout: 30_000 }, async (t) => {
    const { tiles, states } = await s.flaky503(t);
    // Decoded by the adapter (decode.js), where MapLibre's own decode of bytes goes through a Blob.
    for (const tile of tiles) assert.equal(states[tile.key].dataType, "ImageBitmap", `${tile.key}: what the protocol handed MapLibre`);
  });
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
  // Not here: the scenario "a tile left while nothing else waits lands" (Leaflet's suite has it).
  // A request left lands only when its answer is due within `LAND_WITHIN_MS` by the host's p95
  // answer (src/retry/serving.rs). With both cores busy, MapLibre's page (drawn through
  // SwiftShader) took that 200 ms server's tiles at a p95 of 861 and 1,218 ms (its stats()), and
  // the column's two requests, the only ones out, were aborted: the rule, not a fault.

  // WebGL draws no image its page cannot read, whoever loads it: a server without CORS headers
  // leaves MapLibre's own loader blank too. Each tile's error says why and what to do.
  test("createProtocol, server without CORS headers: each tile errors as kind cors, naming the fix", { timeout: 40_000 }, (t) => s.corsErrors(t));
}
