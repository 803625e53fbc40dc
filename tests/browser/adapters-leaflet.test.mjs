// tilefetch/leaflet in headless Chromium with the real Leaflet from npm: createTileLayer(L, ...)
// against the loopback fault server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setUp, scenarios, viewTiles, waitSettled, assertPixels, sleep } from "./adapters-common.mjs";
import { screenshot } from "./helpers.mjs";

let env;
before(async () => {
  env = await setUp("leaflet");
});
after(async () => {
  await env?.close();
});

const s = scenarios(() => env, { name: "leaflet" });

test("createTileLayer: 30 % 503s, every tile of the view loads and is drawn", { timeout: 30_000 }, (t) => s.flaky503(t));
test("createTileLayer: 429 + Retry-After, every tile loads after the pause", { timeout: 30_000 }, (t) => s.retryAfter429(t));
test("createTileLayer: 404 tiles fire tileerror with the TileError within 200 ms, requested once", { timeout: 30_000 }, (t) =>
  s.notFound(t, {
    check(r, tile) {
      assert.equal(r.isTileError, true, `${tile.key}: tileerror's error is the TileError`);
      assert.equal(r.kind, "http");
      assert.equal(r.status, 404);
    },
  }),
);
test("createTileLayer: panning away aborts slow, queued and sleeping tiles", { timeout: 30_000 }, (t) => s.panAborts(t));
test("createTileLayer: a tile left while nothing else waits lands, and is shown again without a request", { timeout: 40_000 }, (t) => s.leftTilesLand(t));

// A server without CORS headers (MapServer's and GeoServer's default): shown as Leaflet's own
// <img> loader shows it, with tilefetch's retries.
test("createTileLayer, server without CORS headers: every tile shown", { timeout: 40_000 }, (t) => s.withoutCors(t));
test("createTileLayer, server without CORS headers: the next visit remembers it (no first contact)", { timeout: 40_000 }, (t) => s.withoutCorsRemembered(t));
test("createTileLayer, server without CORS headers, 30 % 503s: retried, every tile shown", { timeout: 40_000 }, (t) => s.withoutCorsFlaky(t));
test("createTileLayer, server without CORS headers, first requests hang: every tile shown", { timeout: 40_000 }, (t) => s.withoutCorsHang(t));
test("createTileLayer, server without CORS headers, a 1.5 s outage: every tile shown after it", { timeout: 40_000 }, (t) => s.withoutCorsOutage(t));
test("createTileLayer, a server that needs the page's cookie (no CORS headers): every tile shown", { timeout: 40_000 }, (t) => s.cookieServer(t));

test("createTileLayer: {s} subdomains are tilefetch mirrors (a retry goes to the next one)", { timeout: 30_000 }, async (_t) => {
  // Mirrors by host name: Chromium resolves every *.localhost name to the loopback server.
  const run = "leaflet-mirrors";
  const port = new URL(env.srv.url).port;
  const page = await env.open();
  try {
    const zoom = 3;
    const center = [1024, 768];
    const tiles = viewTiles(zoom, center);
    await page.evaluate((s) => window.harness.create(s), {
      template: `http://{s}.localhost:${port}/tile/{z}/{x}/{y}.png?run=${run}&f=503&n=1`,
      zoom,
      center,
      options: { subdomains: "ab", baseDelayMs: 20, maxDelayMs: 100 },
    });
    const states = await waitSettled(
      page,
      tiles.map((x) => x.key),
    );
    await screenshot(page, "leaflet-mirrors");
    for (const tile of tiles) assert.equal(states[tile.key].state, "loaded", `${tile.key}: ${JSON.stringify(states[tile.key])}`);
    for (const tile of tiles) {
      const hosts = env.srv.log.filter((e) => e.key === `${run}/${tile.key}`).map((e) => e.headers.host.split(":")[0]);
      assert.equal(hosts.length, 2, `${tile.key}: a 503, then the tile`);
      assert.notEqual(hosts[0], hosts[1], `${tile.key}: the retry went to the other mirror (${hosts.join(", ")})`);
      assert.ok(
        hosts.every((h) => /^[ab]\.localhost$/.test(h)),
        hosts.join(", "),
      );
    }
    await assertPixels(page, tiles);
    const mirror503 = /^page console\.error: Failed to load resource: the server responded with a status of 503 .*\(at http:\/\/[ab]\.localhost:/;
    assert.deepEqual(
      page.problems().filter((p) => !mirror503.test(p)),
      [],
    );
  } finally {
    await page.closeContext();
  }
});

// A map panned back: Leaflet makes the tiles anew; the client's recent tiles hand them out
// again without a request, as Leaflet's own <img> loader does from the page's image memory. The
// first view's tiles, but its first, load as images into Leaflet's own <img> while the page
// learns whether the server sends CORS headers, and are shown again from images the page kept:
// after a garbage collection too (an image nothing holds is asked of the server again, its
// answer stating no freshness).
test("createTileLayer: tiles shown again after a pan back come from memory, not the server", { timeout: 30_000 }, () => panBack("leaflet-pan-back"));

// A layer class that removes its tiles its own way (a plugin's): its removal runs, and a first
// view's kept images are copied before it empties their elements.
test("routeTileLayer: a class that removes tiles its own way: tiles shown again after a pan back come from memory", { timeout: 30_000 }, () =>
  panBack("leaflet-pan-back-own-removal", "own-removal"),
);

/** Opens a view, pans away and back twice, after a garbage collection: no request for tiles shown before. */
async function panBack(run, kind) {
  const page = await env.open();
  try {
    const zoom = 3;
    const home = [1024, 768];
    const away = [home[0], home[1] + 1024];
    const tiles = viewTiles(zoom, home);
    const keys = tiles.map((t) => t.key);
    const loads = (key) => page.evaluate((k) => window.harness.states()[k]?.starts ?? 0, key);
    /** Moves to `center` and waits until each of its view tiles has loaded once more. */
    const go = async (center) => {
      const view = viewTiles(zoom, center).map((t) => t.key);
      const before = await Promise.all(view.map(loads));
      await page.evaluate(([c, z]) => window.harness.view(c, z), [center, zoom]);
      await page.waitForFunction(
        ([view, before]) => view.every((k, i) => window.harness.states()[k]?.starts > before[i] && window.harness.states()[k].state === "loaded"),
        [view, before],
        { timeout: 10_000 },
      );
    };
    // cc=none: no Cache-Control, as most tile servers send (the fault server's default is no-store).
    await page.evaluate((s) => window.harness.create(s), { template: `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}&cc=none`, zoom, center: home, kind });
    await waitSettled(page, keys);
    await go(away);
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("HeapProfiler.collectGarbage");
    const requests = env.srv.requests(run);
    const fromMemory = await page.evaluate(() => window.__defaultClientFromMemory());
    await go(home);
    await go(away);
    await go(home);
    await sleep(150); // a frame to draw the last tile
    await screenshot(page, "leaflet-pan-back");
    await assertPixels(page, tiles);
    assert.equal(env.srv.requests(run), requests, "no request for the tiles shown before");
    const awayTiles = viewTiles(zoom, away).length;
    const served = (await page.evaluate(() => window.__defaultClientFromMemory())) - fromMemory;
    assert.ok(served >= awayTiles, `${served} tiles from memory for the ${awayTiles} of the view away`);
    if (kind === "own-removal") assert.ok((await page.evaluate(() => window.__ownRemovals ?? 0)) > 0, "the class's own removal ran");
  } finally {
    await page.closeContext();
  }
}

test("createTileLayer: a first view's tiles load into their own <img>, one element and one request each", { timeout: 30_000 }, async (_t) => {
  const run = "leaflet-own-img";
  const page = await env.open();
  try {
    const zoom = 3;
    const center = [1024, 768];
    const keys = viewTiles(zoom, center).map((t) => t.key);
    // Images made other than by the layer's createTile: none (each tile's own <img> is the image
    // kept for a pan back).
    await page.evaluate(() => {
      const Native = window.Image;
      window.__imagesMade = 0;
      window.Image = class extends Native {
        constructor(...args) {
          super(...args);
          window.__imagesMade++;
        }
      };
    });
    await page.evaluate((s) => window.harness.create(s), { template: `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}`, zoom, center });
    await waitSettled(page, keys);
    const r = await page.evaluate(() => {
      const tiles = [...document.querySelectorAll(".leaflet-tile")];
      return {
        made: window.__imagesMade,
        tags: [...new Set(tiles.map((t) => t.tagName))],
        byAddress: tiles.filter((t) => t.tagName === "IMG" && /\/tile\/\d+\/\d+\/\d+\.png/.test(t.src)).length,
        tiles: tiles.length,
      };
    });
    assert.deepEqual(r.tags, ["IMG"], "a first view's tiles are <img> (their origin not known yet to send CORS headers)");
    assert.equal(r.made, 0, `${r.made} image elements made beside the ${r.byAddress} tiles loaded into their own`);
    // All but the origin's first contact (its bytes, through fetch) show their own address.
    assert.ok(r.byAddress >= r.tiles - 1, `${r.byAddress} of ${r.tiles} tiles show the tile's own address`);
    for (const key of keys) assert.equal(env.srv.requests(`${run}/${key}`), 1, `${key}: one request`);
    await assertPixels(page, viewTiles(zoom, center));
  } finally {
    await page.closeContext();
  }
});
