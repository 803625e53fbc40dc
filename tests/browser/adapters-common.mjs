// Shared by the adapters-*.test.mjs suites (not a test file itself): builds the test pages of
// tests/browser/fixtures/adapters/ with Vite (the real map libraries from node_modules, tilefetch
// and its adapters from pkg/ through the package's subpath names), serves them, and runs the
// scenarios every adapter must pass against the loopback fault server.
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import zlib from "node:zlib";
import { buildPage as buildViteTestPage } from "../../www/build-page.mjs";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { ROOT, assertBuilt, startStaticServer, launchBrowser, newCheckedPage, failedLoadFrom, screenshot } from "./helpers.mjs";

export const TILE = 256;
// The map's size in the test pages (their #map), and so the view's tiles; a benchmark may set
// another before setUp (setMapSize).
export let MAP_W = 768;
export let MAP_H = 512;

/** Makes the pages' map `w`×`h` CSS px (the browser's viewport around it). */
export function setMapSize(w, h) {
  MAP_W = w;
  MAP_H = h;
}
const FIXTURES = path.join(ROOT, "tests/browser/fixtures/adapters");

/** Vite-builds `entry`.html of the fixtures into a temporary folder. */
function buildPage(entry, outDir) {
  return buildViteTestPage({ root: FIXTURES, input: path.join(FIXTURES, `${entry}.html`), outDir });
}

/**
 * Files a page loads as they ship, beside its build: CesiumJS's own build (a classic script that
 * starts its workers and reads its assets from CESIUM_BASE_URL), which Vite need not bundle.
 */
const PAGE_FILES = { cesium: [["node_modules/cesium/Build/Cesium", "cesium"]] };

/**
 * How a site serves a built page: the HTML asked again each visit, the rest (Vite's hashed
 * assets, a library's own build) kept by the browser.
 */
export const SITE_CACHING = (pathname) => (pathname.endsWith(".html") ? "no-cache" : "public, max-age=31536000, immutable");

/**
 * Starts the fault server, builds and serves `entry`'s page and launches Chromium. Returns an
 * object with `srv`, `open()` (a new page at the map, with window.harness ready) and `close()`.
 * `cacheControl`: the page server's (startStaticServer's), e.g. SITE_CACHING.
 */
export async function setUp(entry, { webgl = false, tls = null, cacheControl } = {}) {
  assertBuilt();
  const env = { srv: null, web: null, browser: null, tmp: null };
  env.close = async () => {
    await env.browser?.close();
    await env.web?.close();
    await env.srv?.close();
    if (env.tmp) fs.rmSync(env.tmp, { recursive: true, force: true });
  };
  try {
    env.tmp = fs.mkdtempSync(path.join(os.tmpdir(), `tilefetch-${entry}-`));
    const outDir = path.join(env.tmp, "dist");
    const [built, launched, started] = await Promise.allSettled([
      buildPage(entry, outDir),
      launchBrowser({ webgl, args: tls ? [`--ignore-certificate-errors-spki-list=${tls.spki}`] : [] }),
      startFaultServer({ seed: 1, tls }),
    ]);
    if (launched.status === "fulfilled") env.browser = launched.value;
    if (started.status === "fulfilled") env.srv = started.value;
    for (const r of [built, launched, started]) if (r.status === "rejected") throw r.reason;
    for (const [from, to] of PAGE_FILES[entry] ?? []) fs.cpSync(path.join(ROOT, from), path.join(outDir, to), { recursive: true });
    env.web = await startStaticServer(outDir, { allow: ["/"], cacheControl });
  } catch (e) {
    await env.close();
    throw e;
  }
  env.open = async () => {
    const viewport = { width: Math.max(900, MAP_W + 132), height: Math.max(640, MAP_H + 128) };
    const page = await newCheckedPage(env.browser, { expectedConsoleError: failedLoadFrom(env.srv.url), viewport });
    await page.goto(`${env.web.url}/${entry}.html`);
    await page.waitForFunction(() => window.harness !== undefined && window.__ready === true, null, { timeout: 15_000 });
    if (MAP_W !== 768 || MAP_H !== 512) {
      // Before the map is made: each library reads its container's size then.
      await page.evaluate(([w, h]) => Object.assign(document.getElementById("map").style, { width: `${w}px`, height: `${h}px` }), [MAP_W, MAP_H]);
    }
    return page;
  };
  return env;
}

/** The tiles of zoom `z` that a MAP_W×MAP_H view centred on global pixel `center` shows, with their viewport position. */
export function viewTiles(z, [gx, gy]) {
  const left = gx - MAP_W / 2;
  const top = gy - MAP_H / 2;
  const tiles = [];
  for (let y = Math.floor(top / TILE); y * TILE < top + MAP_H; y++) {
    for (let x = Math.floor(left / TILE); x * TILE < left + MAP_W; x++) {
      tiles.push({ z, x, y, key: `${z}/${x}/${y}`, left: x * TILE - left, top: y * TILE - top });
    }
  }
  return tiles;
}

/** The colour at tile pixel (32, 32) of the fault server's tile (away from its darker grid lines). */
const colourCache = new Map();
export function tileColour(z, x, y) {
  const key = `${z}/${x}/${y}`;
  if (colourCache.has(key)) return colourCache.get(key);
  const png = tilePng(z, x, y);
  const idat = [];
  for (let off = 8; off < png.length; ) {
    const len = png.readUInt32BE(off);
    const type = png.toString("latin1", off + 4, off + 8);
    if (type === "IDAT") idat.push(png.subarray(off + 8, off + 8 + len));
    off += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = TILE * 3 + 1;
  const at = 32 * stride + 1 + 32 * 3; // every row uses filter 0 (None)
  const rgb = [raw[at], raw[at + 1], raw[at + 2]];
  colourCache.set(key, rgb);
  return rgb;
}

/**
 * One sample point per tile: a tile pixel (32 + 64i, 32 + 64j), i.e. the middle of a cell of the
 * tile's grid, inside the map, as close to the visible part's centre as possible.
 */
export function samplePoint(t) {
  const vx0 = Math.max(0, t.left);
  const vx1 = Math.min(MAP_W, t.left + TILE);
  const vy0 = Math.max(0, t.top);
  const vy1 = Math.min(MAP_H, t.top + TILE);
  const pick = (lo, hi, origin) => {
    let best = null;
    for (let i = 0; i < 4; i++) {
      const p = origin + 32 + 64 * i;
      if (p < lo + 4 || p >= hi - 4) continue;
      if (best === null || Math.abs(p - (lo + hi) / 2) < Math.abs(best - (lo + hi) / 2)) best = p;
    }
    return best;
  };
  const x = pick(vx0, vx1, t.left);
  const y = pick(vy0, vy1, t.top);
  return x === null || y === null ? null : { x, y };
}

/** Screenshots the page and reads the pixels at `points` (viewport CSS px) from the screenshot. */
export async function readPixels(page, points) {
  const png = await page.screenshot({ clip: { x: 0, y: 0, width: MAP_W, height: MAP_H } });
  return page.evaluate(
    async ({ b64, points, width }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const bitmap = await createImageBitmap(new Blob([bytes], { type: "image/png" }));
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const ctx = canvas.getContext("2d");
      ctx.drawImage(bitmap, 0, 0);
      const scale = bitmap.width / width;
      return points.map(({ x, y }) => Array.from(ctx.getImageData(Math.floor(x * scale), Math.floor(y * scale), 1, 1).data.slice(0, 3)));
    },
    { b64: png.toString("base64"), points, width: MAP_W },
  );
}

/** Asserts that every tile shows its own colour on screen (one sampled pixel each). */
export async function assertPixels(page, tiles, tolerance = 6) {
  const sampled = tiles.map((t) => ({ t, p: samplePoint(t) })).filter((s) => s.p !== null);
  assert.ok(sampled.length >= Math.min(tiles.length, 4), `sample points found for ${sampled.length} tiles`);
  const pixels = await readPixels(
    page,
    sampled.map((s) => s.p),
  );
  const bad = [];
  sampled.forEach(({ t, p }, i) => {
    const want = tileColour(t.z, t.x, t.y);
    const got = pixels[i];
    if (want.some((c, k) => Math.abs(c - got[k]) > tolerance)) bad.push(`${t.key} at (${p.x},${p.y}): want ${want}, got ${got}`);
  });
  assert.deepEqual(bad, [], "every sampled pixel has its tile's colour");
  return sampled.length;
}

/** Waits until every key has a final state in the page's records (or the timeout). */
export async function waitSettled(page, keys, { timeout = 15_000, final = ["loaded", "error", "empty"] } = {}) {
  try {
    await page.waitForFunction(
      ({ keys, final }) => {
        const s = window.harness.states();
        return keys.every((k) => s[k] && final.includes(s[k].state));
      },
      { keys, final },
      { timeout, polling: 50 },
    );
  } catch (_e) {
    const states = await page.evaluate(() => window.harness.states());
    throw new Error(`tiles did not settle: ${JSON.stringify(states)}\n${page.problems().join("\n")}`);
  }
  return page.evaluate(() => window.harness.states());
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Tells `page`'s adapters that the server at `url` sends CORS headers, as a page that met it on
 * an earlier visit knows (its localStorage; docs/map-libraries.md): its first view's tiles then go
 * through `fetch` at once, where a server not met before has them load as images until its first
 * tile's answer is read (an image says no status: a 404 or 204 among them costs a second request).
 */
export function metBefore(page, url) {
  return page.evaluate((origin) => localStorage.setItem(`tilefetch:cors:${origin}`, `cors ${Date.now()}`), new URL(url).origin);
}

const FAST = { baseDelayMs: 50, maxDelayMs: 400 };

/**
 * The scenarios every adapter passes. `spec(extra)` builds the page's harness.create() argument
 * from {template, zoom, center, options, client}; `name` prefixes run ids and screenshots.
 */
export function scenarios(env, { name, spec = (s) => s }) {
  const template = (run, q) => `${env().srv.url}/tile/{z}/{x}/{y}.png?run=${run}&${q}`;
  /** The view most scenarios open: zoom 3, its tiles the same each time. */
  const VIEW = { zoom: 3, center: [1024, 768] };

  /** `fn(page, srv)` on a new page of the map, closed after whatever `fn` did. */
  async function onPage(fn) {
    const { srv, open } = env();
    const page = await open();
    try {
      return await fn(page, srv);
    } finally {
      await page.closeContext();
    }
  }

  /**
   * Opens the map over the view of zoom 3 and checks that every view tile is shown, pixel by
   * pixel. `cookie`: the browser holds that cookie first (a server that answers 403 without it).
   * Returns the tiles, their states, the requests, the tiles the library asked for (it asks for
   * some around the view too) and the requests refused with 403.
   */
  async function loadAll(t, run, q, options, shot, { cookie = null, timeout = 15_000, pageSpec = {}, beforeCreate = () => {} } = {}) {
    return onPage(async (page, srv) => {
      const { zoom, center } = VIEW;
      const tiles = viewTiles(zoom, center);
      if (cookie) await page.context().addCookies([{ name: cookie, value: "1", url: srv.url }]); // the login's cookie
      beforeCreate(); // the page is loaded: what the server does from the map's first request on
      const t0 = Date.now();
      await page.evaluate((s) => window.harness.create(s), spec({ template: template(run, q), zoom, center, options, ...pageSpec }));
      const states = await waitSettled(
        page,
        tiles.map((x) => x.key),
        { timeout },
      );
      await sleep(150); // a frame or two to draw the last tile
      const file = await screenshot(page, `${name}-${shot}`);
      const requests = srv.requests(run);
      const mine = srv.log.filter((e) => e.key.startsWith(`${run}/`));
      const refused = mine.filter((e) => e.status === 403).length;
      const asked = new Set(mine.map((e) => e.key)).size;
      t.diagnostic(
        `${tiles.length} tiles in view, ${asked} asked for, shown in ${Date.now() - t0} ms; ${requests} requests (${(requests / asked).toFixed(2)} per tile asked for${cookie ? `, ${refused} refused 403` : ""}); screenshot ${file}`,
      );
      for (const tile of tiles) assert.equal(states[tile.key].state, "loaded", `${tile.key}: ${JSON.stringify(states[tile.key])}`);
      const n = await assertPixels(page, tiles);
      t.diagnostic(`${n} tiles' pixels checked`);
      assert.deepEqual(page.problems(), [], "no unexpected page errors");
      const hedges = await page.evaluate(() => window.__defaultClientHedges());
      return { tiles, states, requests, asked, refused, hedges };
    });
  }

  /** loadAll on a server that sends no CORS headers (`cors=0`), with `cookie=` when there is one. */
  const loadWithoutCors = (t, run, q, options, shot, { cookie = null } = {}) =>
    loadAll(t, run, ["cors=0", cookie && `cookie=${cookie}`, q].filter(Boolean).join("&"), options, shot, { cookie, timeout: 20_000 });

  return {
    /** The view opened under the faults of query `q`: every tile loaded and drawn (loadAll's checks). */
    load(t, run, q, shot, options = {}, { timeout, page: pageSpec, beforeCreate } = {}) {
      return loadAll(t, run, q, { ...FAST, ...options }, shot, { timeout, pageSpec, beforeCreate });
    },

    /** The page's engine is of the version `pattern` matches (`expression` reads it in the page). */
    async version(t, expression, pattern) {
      return onPage(async (page) => {
        const version = await page.evaluate(expression);
        assert.match(version, pattern);
        t.diagnostic(`${name}: ${version}`);
      });
    },

    /**
     * A healthy server: every tile drawn, one request per tile, and at most one more per hedge the
     * client sent beside an attempt slow to answer (while the page's main thread was busy, say; a
     * hedge still queued in the browser when its attempt answers never reaches the server).
     */
    async healthy(t) {
      const { requests, asked, hedges } = await loadAll(t, `${name}-healthy`, "", FAST, "healthy");
      assert.ok(requests >= asked && requests <= asked + hedges, `${requests} requests for ${asked} tiles, ${hedges} hedges`);
    },

    /** A ServiceException served with 200 as each tile's first answer: retried, every tile drawn. */
    async serviceException(t) {
      const run = `${name}-sexml`;
      const { tiles } = await loadAll(t, run, "f=sexml&n=1", FAST, "service-exception");
      // At least the exception and the tile (a hedge beside a slow attempt may add one).
      for (const tile of tiles) {
        const n = env().srv.requests(`${run}/${tile.key}`);
        assert.ok(n >= 2, `${tile.key}: the exception, then the tile: ${n} requests`);
      }
    },

    /** Each tile's first request hangs: the attempt timeout ends it, the retry draws the tile. */
    async hangs(t) {
      await loadAll(t, `${name}-hang`, "f=hang&n=1", { ...FAST, attemptTimeoutMs: 800, deadlineMs: 8000 }, "hang");
    },

    /**
     * A server without CORS headers, for an engine that draws through WebGL, which may draw no image
     * its page cannot read, whoever loads it (the engine's own loader fails there too): each view
     * tile's error is kind `cors`, naming the fix, after one request per tile and one check shared
     * by them. `check(states, tiles, page)`: the engine's own checks.
     */
    async corsErrors(t, { check = async () => {} } = {}) {
      const run = `${name}-nocors`;
      return onPage(async (page, srv) => {
        const { zoom, center } = VIEW;
        const tiles = viewTiles(zoom, center);
        await page.evaluate((spec) => window.harness.create(spec), { template: template(run, "cors=0"), zoom, center });
        const states = await waitSettled(
          page,
          tiles.map((x) => x.key),
        );
        for (const tile of tiles)
          assert.deepEqual([states[tile.key].state, states[tile.key].kind], ["error", "cors"], `${tile.key}: ${JSON.stringify(states[tile.key])}`);
        await check(states, tiles, page);
        const requests = srv.requests(run);
        const asked = new Set(srv.log.filter((e) => e.key.startsWith(`${run}/`)).map((e) => e.key)).size;
        t.diagnostic(`${tiles.length} tiles in view, ${asked} asked for, ${requests} requests`);
        assert.ok(requests <= asked + 1, `one request per tile and one shared check: ${requests} for ${asked}`);
      });
    },

    /**
     * A server without CORS headers, healthy: every tile shown, each tile fetched once but for
     * the first few, which found the server so (a fetch the browser withheld, one no-cors check).
     */
    async withoutCors(t) {
      const { requests, asked } = await loadWithoutCors(t, `${name}-nocors`, "", FAST, "no-cors");
      // The first tile: the fetch the browser withheld, the no-cors check, the image.
      assert.ok(requests <= asked + 2, `${requests} requests for ${asked} tiles`);
    },

    /**
     * The map opened again in the same browser (a page load later): what the first visit learned
     * of the server is remembered, so no tile pays the first contact again.
     */
    async withoutCorsRemembered(t) {
      return onPage(async (page, srv) => {
        const { zoom, center } = VIEW;
        const keys = viewTiles(zoom, center).map((x) => x.key);
        const visit = async (run) => {
          await page.evaluate((s) => window.harness.create(s), spec({ template: template(run, "cors=0"), zoom, center, options: FAST }));
          const states = await waitSettled(page, keys, { timeout: 20_000 });
          for (const k of keys) assert.equal(states[k].state, "loaded", `${run} ${k}: ${JSON.stringify(states[k])}`);
          const mine = srv.log.filter((e) => e.key.startsWith(`${run}/`));
          return { requests: mine.length, asked: new Set(mine.map((e) => e.key)).size };
        };
        const first = await visit(`${name}-nocors-visit1`);
        await page.reload();
        await page.waitForFunction(() => window.harness !== undefined && window.__ready === true, null, { timeout: 15_000 });
        const second = await visit(`${name}-nocors-visit2`);
        t.diagnostic(`first visit ${first.requests} requests for ${first.asked} tiles, the next ${second.requests} for ${second.asked}`);
        assert.ok(first.requests > first.asked, "the first visit paid the first contact");
        assert.equal(second.requests, second.asked, "the next visit asks each tile once, as images");
        assert.deepEqual(page.problems(), []);
      });
    },

    /** The same server with 30 % 503s (which an <img> cannot read): retried, every tile shown. */
    async withoutCorsFlaky(t) {
      const run = `${name}-nocors-flaky`;
      const { requests, asked } = await loadWithoutCors(t, run, "f=503&p=0.3", FAST, "no-cors-flaky-503");
      assert.ok(requests > asked + 2, `failed images were retried: ${requests} requests for ${asked} tiles`);
    },

    /** Every tile's first request hangs: the attempt timeout (or a hedge) ends it, the retry shows the tile. */
    async withoutCorsHang(t) {
      await loadWithoutCors(t, `${name}-nocors-hang`, "f=hang&n=1", { ...FAST, attemptTimeoutMs: 800, deadlineMs: 8000 }, "no-cors-hang");
    },

    /** An outage of 1.5 s from the start (503 to everything): the tiles are shown after it. */
    async withoutCorsOutage(t) {
      const run = `${name}-nocors-outage`;
      env().srv.outage(run, 1500);
      await loadWithoutCors(t, run, "", { ...FAST, deadlineMs: 8000 }, "no-cors-outage");
    },

    /** A server that answers 403 without the page's cookie and sends no CORS headers: shown as an <img> shows it. */
    async cookieServer(t) {
      const { refused } = await loadWithoutCors(t, `${name}-cookie`, "", FAST, "cookie", { cookie: "tfsession" });
      assert.ok(refused <= 2, `only the first tile's fetch and the check went without the cookie: ${refused}`);
    },

    async flaky503(t) {
      const run = `${name}-flaky`;
      const loaded = await loadAll(t, run, "f=503&p=0.3", FAST, "flaky-503");
      assert.ok(env().srv.requests(run) > loaded.tiles.length, "some tiles were retried");
      return loaded;
    },

    async retryAfter429(t) {
      const run = `${name}-429`;
      const { tiles, states } = await loadAll(t, run, "f=429&ra=1&n=1", FAST, "retry-after-429");
      for (const tile of tiles) {
        assert.equal(env().srv.requests(`${run}/${tile.key}`), 2, `${tile.key}: a 429, then the tile`);
        const r = states[tile.key];
        assert.ok(r.t1 - r.t0 >= 900, `${tile.key} waited for Retry-After: ${r.t1 - r.t0} ms`);
      }
    },

    /**
     * Every view tile 404s: each is requested once and ends as an error (`timed`: within 200 ms of
     * the server's 404 (the page's time: minus its event-loop stalls), and within 1 s of wall time
     * from the loader's call). The 200 ms start at the answer, not the call: the browser holds
     * requests to one host behind its six connections, and the loaded test machine's server and
     * network process answer when they can; neither is the adapter's doing.
     */
    async notFound(t, { check = () => {}, timed = true } = {}) {
      const run = `${name}-404`;
      return onPage(async (page, srv) => {
        const { zoom, center } = VIEW;
        const tiles = viewTiles(zoom, center);
        // Open the browser's six connections to the tile server first: the 200 ms are the
        // adapter's, not a cold browser's connection setup.
        await page.evaluate((u) => Promise.all(Array.from({ length: 6 }, () => fetch(u).then((r) => r.text()))), `${srv.url}/health`);
        // A server the page has met (an image would not show the status).
        await metBefore(page, srv.url);
        await page.evaluate((s) => window.harness.create(s), spec({ template: template(run, "f=404"), zoom, center, options: FAST }));
        const states = await waitSettled(
          page,
          tiles.map((x) => x.key),
        );
        await sleep(300); // time for any (wrong) second request to arrive
        await screenshot(page, `${name}-404`);
        // Server time → page time, both through the wall clock (one machine, sub-ms origins).
        const pageOrigin = await page.evaluate(() => performance.timeOrigin);
        const serverToPage = performance.timeOrigin + performance.now() - srv.now() - pageOrigin;
        const sinceAnswer = {};
        for (const tile of tiles) {
          const r = states[tile.key];
          assert.equal(r.state, "error", `${tile.key}: ${JSON.stringify(r)}`);
          assert.equal(srv.requests(`${run}/${tile.key}`), 1, `${tile.key} requested once`);
          const answered = srv.log.find((e) => e.key === `${run}/${tile.key}`).t + serverToPage;
          const stall = await page.evaluate(([a, b]) => window.__stallBetween(a, b), [answered, r.t1]);
          sinceAnswer[tile.key] = r.t1 - answered - stall;
          if (timed) {
            assert.ok(
              sinceAnswer[tile.key] < 200,
              `${tile.key} ended ${Math.round(r.t1 - answered)} ms after the server's 404, ${Math.round(stall)} ms of it stalled`,
            );
            assert.ok(r.t1 - r.t0 < 1000, `${tile.key} ended within 1 s of wall time: ${r.t1 - r.t0} ms`);
          }
          check(r, tile);
        }
        const span = (xs) => `${Math.round(Math.min(...xs))}–${Math.round(Math.max(...xs))} ms`;
        t.diagnostic(
          `404 tiles ended ${span(tiles.map((x) => states[x.key].t1 - states[x.key].t0))} after the loader's call, ` +
            `${span(Object.values(sinceAnswer))} after the server's answer (page stalls excluded); ${srv.requests(run)} requests`,
        );
        assert.deepEqual(page.problems(), [], "no unexpected page errors");
      });
    },

    /**
     * Slow tiles (in flight, queued behind maxConcurrent 3, sleeping 3 s after a 503), then a jump
     * far away: the old view's connections are aborted and none of its tiles is requested again.
     */
    /**
     * A tile the library gives up while nothing else waits for the server: its request, which
     * the server has, lands into the client's recent tiles (`whenAbandoned: "yield"`, the Leaflet
     * and MapLibre adapters' default), and showing the tile again costs no request. The map opens
     * at c and a (their tiles kept), pans a tile east (a column of new tiles goes out, answered
     * 200 ms late), and jumps back to c at once, whose tiles come from memory. With
     * `whenAbandoned: "abort"` the column's requests are aborted on the server and asked again
     * (the checks below fail).
     */
    async leftTilesLand(t) {
      const run = `${name}-land`;
      return onPage(async (page, srv) => {
        await metBefore(page, srv.url); // through fetch from the first view: answers to learn from
        const zoom = 5;
        const a = [4096, 4096];
        const c = [a[0] + 10 * TILE, a[1]];
        const edge = [a[0] + TILE, a[1]];
        const keysOf = (center) => viewTiles(zoom, center).map((x) => x.key);
        await page.evaluate((s) => window.harness.create(s), spec({ template: template(run, "delay=200&cc=none"), zoom, center: c }));
        await waitSettled(page, keysOf(c));
        await page.evaluate((p) => window.harness.jump(p), a);
        await waitSettled(page, keysOf(a));
        const known = new Set([...keysOf(c), ...keysOf(a)]);
        const column = keysOf(edge)
          .filter((k) => !known.has(k))
          .map((k) => `${run}/${k}`);
        const jumpedAt = srv.now();
        await page.evaluate((p) => window.harness.jump(p), edge);
        const deadline = Date.now() + 5_000;
        while (column.some((k) => srv.requests(k) === 0) && Date.now() < deadline) await sleep(5);
        await page.evaluate((p) => window.harness.jump(p), c);
        await waitSettled(page, keysOf(c));
        await sleep(600); // the column's requests land
        const sent = column.filter((k) => srv.requests(k) > 0);
        assert.ok(sent.length >= 1, `the column's requests were on the server when the view moved on (${column.length} tiles)`);
        const aborted = sent.reduce((n, k) => n + srv.aborted(k), 0);
        // What the server saw from the jump to the column on, for a failure's message.
        const seen = srv.log
          .filter((e) => e.key.startsWith(`${run}/`) && e.t >= jumpedAt)
          .map(
            (e) =>
              `${e.key.slice(run.length + 1)} ${e.outcome} at ${Math.round(e.t - jumpedAt)}–${Math.round((e.tAborted ?? e.tDone ?? Number.NaN) - jumpedAt)} ms`,
          );
        assert.equal(aborted, 0, `none of the column's ${sent.length} requests was aborted on the server (from the jump on: ${seen.join(", ")})`);
        const before = sent.map((k) => srv.requests(k));
        await page.evaluate((p) => window.harness.jump(p), edge);
        const states = await waitSettled(page, keysOf(edge));
        for (const k of keysOf(edge)) assert.equal(states[k].state, "loaded", k);
        assert.deepEqual(
          sent.map((k) => srv.requests(k)),
          before,
          "the column shown again without a request",
        );
        t.diagnostic(`${sent.length} requests of the column left landed; ${srv.requests(run)} requests in all`);
        assert.deepEqual(page.problems(), [], "no unexpected page errors");
      });
    },

    async panAborts(t, { noError = true } = {}) {
      const run = `${name}-pan`;
      return onPage(async (page, srv) => {
        const zoom = 5;
        const center = [4096, 4096];
        const old = viewTiles(zoom, center);
        await page.evaluate(
          (s) => window.harness.create(s),
          spec({
            template: template(run, "f=503&n=1&p=0.4&slowp=0.6&slowms=6000"),
            zoom,
            center,
            options: { baseDelayMs: 3000, maxDelayMs: 3000, jitter: "none", deadlineMs: 20_000, attemptTimeoutMs: 10_000 },
            client: { maxConcurrent: 3 },
          }),
        );
        const deadline = Date.now() + 10_000;
        while (!(srv.requests(run) >= 4 && srv.concurrent(run) >= 1) && Date.now() < deadline) await sleep(20);
        await sleep(300);
        const openBefore = srv.concurrent(run);
        const requestsBefore = srv.requests(run);
        assert.ok(openBefore >= 1, "some tiles are in flight when the view moves");
        await page.evaluate((c) => window.harness.jump(c), [center[0] + 10 * TILE, center[1]]);
        await sleep(500);
        const keys = old.map((x) => `${run}/${x.key}`);
        const sum = (f) => keys.reduce((n, k) => n + f(k), 0);
        assert.equal(
          sum((k) => srv.concurrent(k)),
          0,
          "no request of the old view is open",
        );
        const aborted = sum((k) => srv.aborted(k));
        assert.ok(aborted >= 1, `the old view's connections were aborted (${aborted})`);
        const snapshot = keys.map((k) => srv.requests(k));
        await sleep(3500); // past the 3 s backoff of the tiles that were sleeping
        assert.deepEqual(
          keys.map((k) => srv.requests(k)),
          snapshot,
          "no tile of the old view was requested again",
        );
        for (const [i, k] of keys.entries()) assert.ok(snapshot[i] <= 2, `${k}: ${snapshot[i]} requests`);
        await screenshot(page, `${name}-pan-abort`);
        const states = await page.evaluate(() => window.harness.states());
        if (noError) {
          for (const x of old) assert.notEqual(states[x.key]?.state, "error", `${x.key} was aborted, not failed: ${JSON.stringify(states[x.key])}`);
        }
        t.diagnostic(
          `before the jump: ${requestsBefore} requests, ${openBefore} open; old view: ${snapshot.reduce((a, b) => a + b, 0)} requests, ${aborted} aborted connections`,
        );
        assert.deepEqual(page.problems(), [], "no unexpected page errors");
      });
    },
  };
}
