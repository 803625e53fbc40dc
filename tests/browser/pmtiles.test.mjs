// MapLibre GL (through pmtiles' Protocol) and Leaflet (through pmtiles' leafletRasterLayer) in
// Chromium over a PMTiles archive: with PMTilesSource, every tile of every view is drawn (its
// colour at its centre is the archive tile's) under 20 % 503s, 5 % resets and 5 % cut bodies from
// the header request on; pmtiles' own FetchSource under the same faults leaves holes. The archive
// (PyPI pmtiles) is served by the loopback static-storage server (tests/pmtiles/archive-server.mjs).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { buildPage } from "../../www/build-page.mjs";
import { startArchiveServer } from "../pmtiles/archive-server.mjs";
import { makeArchive } from "../pmtiles/archives.mjs";
import { ROOT, assertBuilt, failedLoadFrom, launchBrowser, newCheckedPage, startStaticServer } from "./helpers.mjs";

const FAULTS = "p503=0.2&preset=0.05&pcut=0.05";
// Zooms and [lon, lat] centres: a world view, then four views of the archive's z4 tiles.
const VIEWS = [
  [0, [0, 0]],
  [4, [-120, 45]],
  [4, [-30, -30]],
  [4, [60, 20]],
  [4, [150, -50]],
];
// How each page takes a view: MapLibre's zoom z shows 256-px tiles of zoom z + 1; Leaflet's
// centre is [lat, lon].
const PAGES = {
  maplibre: { entry: "pmtiles", view: ([z, [lon, lat]]) => ({ zoom: Math.max(0, z - 1), center: [lon, lat] }) },
  leaflet: { entry: "pmtiles-leaflet", view: ([z, [lon, lat]]) => ({ zoom: Math.max(1, z), center: [lat, lon] }) },
};
let env;
before(async () => {
  assertBuilt();
  env = { tmp: fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-pmtiles-")) };
  const fixtures = path.join(ROOT, "tests/browser/fixtures/adapters");
  const dist = path.join(env.tmp, "dist");
  [, , env.browser, env.archives] = await Promise.all([
    buildPage({ root: fixtures, input: path.join(fixtures, "pmtiles.html"), outDir: path.join(dist, "maplibre") }),
    buildPage({ root: fixtures, input: path.join(fixtures, "pmtiles-leaflet.html"), outDir: path.join(dist, "leaflet") }),
    launchBrowser({ webgl: true }),
    startArchiveServer({ "world.pmtiles": makeArchive({ maxzoom: 4 }) }),
  ]);
  // One server per page: each build refers to its assets from its root.
  env.web = {
    maplibre: await startStaticServer(path.join(dist, "maplibre")),
    leaflet: await startStaticServer(path.join(dist, "leaflet")),
  };
});
after(async () => {
  await env?.browser?.close();
  await env?.web?.maplibre?.close();
  await env?.web?.leaflet?.close();
  await env?.archives?.close();
  if (env?.tmp) fs.rmSync(env.tmp, { recursive: true, force: true });
});

/** Chromium's log lines for what the server injects: statuses, resets and cut bodies. */
function injectedFaults(msg) {
  const fromArchive = (msg.location()?.url ?? "").startsWith(`${env.archives.url}/`);
  return (
    failedLoadFrom(env.archives.url)(msg) ||
    (fromArchive && /^Failed to load resource: net::ERR_(CONTENT_LENGTH_MISMATCH|EMPTY_RESPONSE|CONNECTION_RESET)/.test(msg.text()))
  );
}

/** The colour make-archive.py gives tile z/x/y of variant 0 (x wrapped: Leaflet repeats the world). */
const colourOf = (key) => {
  const [z, x, y] = key.split("/").map(Number);
  const wrapped = ((x % 2 ** z) + 2 ** z) % 2 ** z;
  return [(z * 50) % 256, (wrapped * 37) % 256, (y * 59) % 256];
};

/** Runs the views over the archive in `lib`'s page; returns per view the tiles drawn, the holes and the map's errors. */
async function runViews(lib, own, run) {
  const { entry, view } = PAGES[lib];
  const page = await newCheckedPage(env.browser, { expectedConsoleError: injectedFaults, viewport: { width: 900, height: 640 } });
  try {
    await page.goto(`${env.web[lib].url}/${entry}.html`);
    await page.waitForFunction(() => window.__ready === true);
    const url = `${env.archives.url}/world.pmtiles?run=${run}&${FAULTS}`;
    const results = [];
    for (const [i, at] of VIEWS.entries()) {
      const { zoom, center } = view(at);
      await page.evaluate(
        ([spec, first]) => (first ? window.harness.create(spec) : window.harness.jump(spec.center, spec.zoom)),
        [{ url, own, zoom, center }, i === 0],
      );
      // A map whose source failed (its header unread) may never be idle: its tiles are holes.
      await page.evaluate(() => window.harness.idle(10_000));
      // The view's own zoom, the deepest of its tiles: MapLibre keeps their parents as placeholders.
      const { tiles: all, errors } = await page.evaluate(() => window.harness.view());
      const tileZoom = Math.max(...all.map((t) => Number(t.key.split("/")[0])));
      const tiles = all.filter((t) => t.key.startsWith(`${tileZoom}/`));
      const drawn = tiles.filter((t) => t.state === "loaded" && (t.rgb === null || t.rgb.every((c, j) => Math.abs(c - colourOf(t.key)[j]) <= 2)));
      results.push({ tiles: tiles.length, drawn: drawn.length, holes: tiles.length - drawn.length, errors, seen: tiles, all: all.map((t) => t.key) });
    }
    if (!own) assert.deepEqual(page.problems(), []);
    return results;
  } finally {
    await page.closeContext();
  }
}

for (const [lib, title] of [
  ["maplibre", "MapLibre + pmtiles' Protocol"],
  ["leaflet", "Leaflet + pmtiles' leafletRasterLayer"],
]) {
  test(`${title} over PMTilesSource, faults from the header on: every tile of every view drawn`, { timeout: 120_000 }, async (t) => {
    for (const seed of [1, 2]) {
      const run = `${lib}-${seed}`;
      const views = await runViews(lib, false, `${run}&seed=${seed}`);
      for (const [i, v] of views.entries()) {
        assert.ok(v.tiles >= (i === 0 ? 1 : 6), `view ${i}: ${v.tiles} tiles of ${JSON.stringify(v.all)}`);
        assert.equal(v.holes, 0, `seed ${seed}, view ${i}: ${JSON.stringify(v.seen.filter((t) => t.state !== "loaded" || t.rgb))} ${v.errors}`);
      }
      const faults = env.archives.log.filter((e) => e.run === run && e.fault !== "none").length;
      assert.ok(faults >= 5, `seed ${seed}: ${faults} faults injected`);
      const tiles = views.reduce((n, v) => n + v.tiles, 0);
      t.diagnostic(`${lib}, seed ${seed}: ${tiles} tiles over ${views.length} views, 0 holes; ${env.archives.requests(run)} requests, ${faults} faults`);
    }
  });

  test(`${title} over pmtiles' own FetchSource, the same faults: holes`, { timeout: 120_000 }, async (t) => {
    let holes = 0;
    let tiles = 0;
    for (const seed of [1, 2]) {
      for (const v of await runViews(lib, true, `own-${lib}-${seed}&seed=${seed}`)) {
        holes += v.holes;
        tiles += v.tiles;
      }
    }
    t.diagnostic(`${lib}, FetchSource: ${holes} holes in ${tiles} tiles`);
    assert.ok(holes > 0, "FetchSource left no hole: the faults do not bite");
  });
}
