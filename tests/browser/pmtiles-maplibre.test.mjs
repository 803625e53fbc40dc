// MapLibre GL in Chromium over a PMTiles archive through pmtiles' Protocol: with PMTilesSource,
// every tile of every view is drawn (its colour at its centre is the archive tile's) under 20 %
// 503s, 5 % resets and 5 % cut bodies from the header request on; the Protocol's own
// FetchSource under the same faults leaves holes. The archive (PyPI pmtiles) is served by the
// loopback static-storage server (tests/pmtiles/archive-server.mjs).
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
// MapLibre zooms and centres: a world view, then four views at zoom 3 (the archive's z4 tiles).
const VIEWS = [
  [0, [0, 0]],
  [3, [-120, 45]],
  [3, [-30, -30]],
  [3, [60, 20]],
  [3, [150, -50]],
];
let env;
before(async () => {
  assertBuilt();
  env = { tmp: fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-pmtiles-")) };
  const fixtures = path.join(ROOT, "tests/browser/fixtures/adapters");
  const dist = path.join(env.tmp, "dist");
  [, env.browser, env.archives] = await Promise.all([
    buildPage({ root: fixtures, input: path.join(fixtures, "pmtiles.html"), outDir: dist }),
    launchBrowser({ webgl: true }),
    startArchiveServer({ "world.pmtiles": makeArchive({ maxzoom: 4 }) }),
  ]);
  env.web = await startStaticServer(dist);
});
after(async () => {
  await env?.browser?.close();
  await env?.web?.close();
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

/** The colour make-archive.py gives tile z/x/y of variant 0. */
const colourOf = (key) => {
  const [z, x, y] = key.split("/").map(Number);
  return [(z * 50) % 256, (x * 37) % 256, (y * 59) % 256];
};

/** Runs the views over the archive; returns per view the tiles drawn, the holes and the map's errors. */
async function runViews(own, run) {
  const page = await newCheckedPage(env.browser, { expectedConsoleError: injectedFaults, viewport: { width: 900, height: 640 } });
  try {
    await page.goto(`${env.web.url}/pmtiles.html`);
    await page.waitForFunction(() => window.__ready === true);
    const url = `${env.archives.url}/world.pmtiles?run=${run}&${FAULTS}`;
    const results = [];
    for (const [i, [zoom, center]] of VIEWS.entries()) {
      await page.evaluate(
        ([spec, first]) => (first ? window.harness.create(spec) : window.harness.jump(spec.center, spec.zoom)),
        [{ url, own, zoom, center }, i === 0],
      );
      // A map whose source failed (its header unread) may never be idle: its tiles are holes.
      await page.evaluate(() => window.harness.idle(10_000));
      const { tiles, errors } = await page.evaluate(() => window.harness.view());
      const drawn = tiles.filter((t) => t.state === "loaded" && (t.rgb === null || t.rgb.every((c, j) => Math.abs(c - colourOf(t.key)[j]) <= 2)));
      results.push({ tiles: tiles.length, drawn: drawn.length, holes: tiles.length - drawn.length, errors, seen: tiles });
    }
    if (!own) assert.deepEqual(page.problems(), []);
    return results;
  } finally {
    await page.closeContext();
  }
}

test("MapLibre + pmtiles Protocol over PMTilesSource, faults from the header on: every tile of every view drawn", { timeout: 120_000 }, async (t) => {
  for (const seed of [1, 2]) {
    const views = await runViews(false, `tilefetch-${seed}&seed=${seed}`);
    for (const [i, v] of views.entries()) {
      assert.ok(v.tiles >= (i === 0 ? 1 : 6), `view ${i}: ${v.tiles} tiles`);
      assert.equal(v.holes, 0, `seed ${seed}, view ${i}: ${JSON.stringify(v.seen.filter((t) => t.state !== "loaded" || t.rgb))} ${v.errors}`);
    }
    const faults = env.archives.log.filter((e) => e.run === `tilefetch-${seed}` && e.fault !== "none").length;
    assert.ok(faults >= 5, `seed ${seed}: ${faults} faults injected`);
    const tiles = views.reduce((n, v) => n + v.tiles, 0);
    t.diagnostic(`seed ${seed}: ${tiles} tiles over ${views.length} views, 0 holes; ${env.archives.requests(`tilefetch-${seed}`)} requests, ${faults} faults`);
  }
});

test("the Protocol's own FetchSource under the same faults leaves holes", { timeout: 120_000 }, async (t) => {
  let holes = 0;
  let tiles = 0;
  for (const seed of [1, 2]) {
    for (const v of await runViews(true, `own-${seed}&seed=${seed}`)) {
      holes += v.holes;
      tiles += v.tiles;
    }
  }
  t.diagnostic(`FetchSource: ${holes} holes in ${tiles} tiles`);
  assert.ok(holes > 0, "FetchSource left no hole: the faults do not bite");
});
