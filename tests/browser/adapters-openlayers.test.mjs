// tilefetch/openlayers in headless Chromium with the real OpenLayers from npm: the XYZ source's
// tileLoadFunction (createTileLoadFunction) and the ol/source/ImageTile loader
// (createImageTileLoader), against the loopback fault server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setUp, scenarios, viewTiles, waitSettled, metBefore } from "./adapters-common.mjs";
import { screenshot } from "./helpers.mjs";

let env;
before(async () => {
  env = await setUp("ol");
});
after(async () => {
  await env?.close();
});

const xyz = scenarios(() => env, { name: "ol-xyz", spec: (s) => ({ ...s, kind: "xyz" }) });
const imageTile = scenarios(() => env, { name: "ol-imagetile", spec: (s) => ({ ...s, kind: "imagetile" }) });

test("XYZ + createTileLoadFunction: 30 % 503s, every tile of the view loads and is drawn", { timeout: 30_000 }, (t) => xyz.flaky503(t));
test("XYZ + createTileLoadFunction: 429 + Retry-After, every tile loads after the pause", { timeout: 30_000 }, (t) => xyz.retryAfter429(t));
test("XYZ + createTileLoadFunction: 404 tiles end as TileState.ERROR within 200 ms, requested once", { timeout: 30_000 }, (t) =>
  xyz.notFound(t, {
    check(r, tile) {
      assert.equal(r.isTileError, true, `${tile.key}: tile.error is the TileError`);
      assert.equal(r.kind, "http");
      assert.equal(r.status, 404);
    },
  }),
);
test("XYZ + createTileLoadFunction (with map): panning away aborts slow, queued and sleeping tiles", { timeout: 30_000 }, (t) => xyz.panAborts(t));

// A server without CORS headers (MapServer's and GeoServer's default): shown as OpenLayers' own
// image loader shows it, with tilefetch's retries.
test("XYZ + createTileLoadFunction, server without CORS headers: every tile shown", { timeout: 40_000 }, (t) => xyz.withoutCors(t));
test("XYZ + createTileLoadFunction, server without CORS headers: the next visit remembers it (no first contact)", { timeout: 40_000 }, (t) =>
  xyz.withoutCorsRemembered(t),
);
test("XYZ + createTileLoadFunction, server without CORS headers, 30 % 503s: retried, every tile shown", { timeout: 40_000 }, (t) => xyz.withoutCorsFlaky(t));
test("XYZ + createTileLoadFunction, server without CORS headers, first requests hang: every tile shown", { timeout: 40_000 }, (t) => xyz.withoutCorsHang(t));
test("XYZ + createTileLoadFunction, server without CORS headers, a 1.5 s outage: every tile shown after it", { timeout: 40_000 }, (t) =>
  xyz.withoutCorsOutage(t),
);
test("XYZ + createTileLoadFunction, a server that needs the page's cookie (no CORS headers): every tile shown", { timeout: 40_000 }, (t) =>
  xyz.cookieServer(t),
);
// ol/source/ImageTile asks for CORS images ('anonymous', which DataTile enforces): OpenLayers' own
// loader shows nothing from such a server, so neither can an image here. The tile's error says why.
test("ImageTile + createImageTileLoader, server without CORS headers: each tile ends as kind cors, one request each", { timeout: 40_000 }, async (t) => {
  const run = "ol-imagetile-nocors";
  const page = await env.open();
  try {
    const zoom = 3;
    const center = [1024, 768];
    const tiles = viewTiles(zoom, center);
    await page.evaluate((s) => window.harness.create(s), {
      kind: "imagetile",
      template: `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}&cors=0`,
      zoom,
      center,
    });
    const states = await waitSettled(
      page,
      tiles.map((x) => x.key),
    );
    for (const tile of tiles) {
      assert.deepEqual([states[tile.key].state, states[tile.key].kind], ["error", "cors"], `${tile.key}: ${JSON.stringify(states[tile.key])}`);
    }
    const requests = env.srv.requests(run);
    t.diagnostic(`${tiles.length} tiles, ${requests} requests`);
    assert.ok(requests <= tiles.length + 1, `one request per tile and one shared check: ${requests}`);
    assert.deepEqual(page.problems(), []);
  } finally {
    await page.closeContext();
  }
});

test("XYZ + createTileLoadFunction: a 204 tile ends as TileState.EMPTY", { timeout: 30_000 }, async (_t) => {
  const run = "ol-xyz-204";
  const page = await env.open();
  try {
    const zoom = 3;
    const center = [1024, 768];
    const tiles = viewTiles(zoom, center);
    await metBefore(page, env.srv.url); // an image would not show the status
    await page.evaluate((s) => window.harness.create(s), {
      kind: "xyz",
      template: `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}&f=204`,
      zoom,
      center,
    });
    const states = await waitSettled(
      page,
      tiles.map((x) => x.key),
    );
    await screenshot(page, "ol-xyz-204");
    for (const tile of tiles) {
      assert.equal(states[tile.key].state, "empty", `${tile.key}: ${JSON.stringify(states[tile.key])}`);
      assert.equal(env.srv.requests(`${run}/${tile.key}`), 1);
    }
    assert.deepEqual(page.problems(), []);
  } finally {
    await page.closeContext();
  }
});

test("ImageTile + createImageTileLoader: 30 % 503s, every tile loads and is drawn", { timeout: 30_000 }, (t) => imageTile.flaky503(t));
test("ImageTile + createImageTileLoader: 404 tiles end as errors within 200 ms, requested once", { timeout: 30_000 }, (t) =>
  imageTile.notFound(t, {
    check(r, tile) {
      assert.equal(r.isTileError, true, `${tile.key}: the loader rejects with the TileError`);
      assert.equal(r.status, 404);
    },
  }),
);

// OpenLayers' own loader never abandons an image it started; the adapter frees OpenLayers' queue
// at once and lets a request the server already has land (whenAbandoned: "land"): no request of
// a view gone is aborted on the server, and a pan back shows those tiles from memory. With
// whenAbandoned: "abort" the same script aborts them (the check below fails).
test("XYZ + createTileLoadFunction (with map): a view left while loading lands its requests, and a pan back shows them from memory", {
  timeout: 40_000,
}, async (t) => {
  const run = "ol-land";
  const page = await env.open();
  try {
    const zoom = 5;
    const a = [4096, 4096];
    const b = [a[0] + 10 * 256, a[1]];
    const c = [a[0] + 20 * 256, a[1]];
    const bKeys = viewTiles(zoom, b).map((x) => `${run}/${x.key}`);
    // Every answer 200 ms late, and no Cache-Control (most tile servers send none). Late enough
    // that a view is left while its requests are out, soon enough that the rule lets them land
    // (due within LAND_WITHIN_MS by the host's p95) with room for a loaded machine's slower
    // answers (at 400 ms, a margin of 100, a CI run saw one request aborted; the p95's buckets
    // put 300 ms at about 130).
    await page.evaluate((s) => window.harness.create(s), {
      kind: "xyz",
      template: `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}&delay=200&cc=none`,
      zoom,
      center: a,
    });
    await waitSettled(
      page,
      viewTiles(zoom, a).map((x) => x.key),
    );
    await page.evaluate((p) => window.harness.jump(p), b);
    const deadline = Date.now() + 5_000;
    while (bKeys.filter((k) => env.srv.requests(k) > 0).length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const sentForB = bKeys.filter((k) => env.srv.requests(k) > 0);
    assert.ok(sentForB.length >= 4, `some of the view's requests are on the server when it moves on (${sentForB.length})`);
    await page.evaluate((p) => window.harness.jump(p), c);
    await waitSettled(
      page,
      viewTiles(zoom, c).map((x) => x.key),
    );
    await new Promise((r) => setTimeout(r, 600)); // the abandoned requests land
    const aborted = bKeys.reduce((n, k) => n + env.srv.aborted(k), 0);
    const hostStats = aborted > 0 ? await page.evaluate(() => window.__defaultClientStats()) : null;
    const abortedLog = env.srv.log.filter((e) => e.outcome === "aborted" && bKeys.includes(e.key));
    assert.equal(
      aborted,
      0,
      `no request of the view left was aborted on the server: ${JSON.stringify(abortedLog.map((e) => ({ key: e.key, t: Math.round(e.t), tAborted: Math.round(e.tAborted), n: e.n, of: env.srv.requests(e.key) })))}; the client's hosts: ${JSON.stringify(hostStats)}`,
    );
    const fromMemory = await page.evaluate(() => window.__defaultClientFromMemory());
    const before = new Map(bKeys.map((k) => [k, env.srv.requests(k)]));
    await page.evaluate((p) => window.harness.jump(p), b);
    const states = await waitSettled(
      page,
      viewTiles(zoom, b).map((x) => x.key),
    );
    for (const x of viewTiles(zoom, b)) assert.equal(states[x.key].state, "loaded", x.key);
    for (const k of sentForB) assert.equal(env.srv.requests(k), before.get(k), `${k}: shown again without a request`);
    const served = (await page.evaluate(() => window.__defaultClientFromMemory())) - fromMemory;
    assert.ok(served >= sentForB.length, `${served} tiles from memory, ${sentForB.length} landed`);
    t.diagnostic(`${sentForB.length} of the view's ${bKeys.length} tiles were on the server when it moved on; ${served} shown again from memory`);
    await screenshot(page, "ol-land");
  } finally {
    await page.closeContext();
  }
});
