// fetchTile in Chromium, in a page and in a dedicated worker, against a tile server that sends no
// CORS headers (the fault server's `cors=0`, as MapServer's CGI and GeoServer ship): the call ends
// at once as kind "cors" with a message that names the way out, the host stays alive (breaker
// closed), later calls send one request each; a host that is down is still a network failure.
import { test, before } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { blankPageSuite, failedLoadFrom, inWorker } from "./helpers.mjs";

const suite = blankPageSuite();
let downUrl; // a loopback port nothing listens on

before(async () => {
  const closed = http.createServer();
  await new Promise((resolve) => closed.listen(0, "127.0.0.1", resolve));
  downUrl = `http://127.0.0.1:${closed.address().port}`;
  await new Promise((resolve) => closed.close(resolve));
});

/** A blank page that expects the down host's refused connections in its console. */
function blankPage() {
  const down = failedLoadFrom(downUrl);
  return suite.blankPage((msg) => down(msg) || /net::ERR_CONNECTION_REFUSED/.test(msg.text()));
}

// Runs in the page or in the worker: three calls to the host without CORS (the first two at once,
// the third after them), then one to a host that is down; what each ended as, and the stats.
async function scenario({ urls, down }) {
  const { TileClient } = await import("/pkg/browser.js");
  const events = [];
  const client = new TileClient({ onEvent: (e) => events.push(e) });
  const call = async (url, options) => {
    const t0 = performance.now();
    try {
      const tile = await client.fetchTile(url, options);
      return { ok: true, attempts: tile.attempts, ms: performance.now() - t0 };
    } catch (e) {
      return { ok: false, name: e.name, kind: e.kind, message: e.message, attempts: e.attempts, causeKind: e.cause?.kind ?? null, ms: performance.now() - t0 };
    }
  };
  const first = await Promise.all([call(urls[0]), call(urls[1])]);
  const later = await call(urls[2]);
  const downCall = await call(down, { deadlineMs: 600, baseDelayMs: 10, maxDelayMs: 40 });
  const stats = client.stats();
  const host = Object.keys(stats).find((h) => urls[0].includes(h));
  return { first, later, down: downCall, stats: stats[host], corsEvents: events.filter((e) => e.type === "cors").length };
}

function check(t, r, run) {
  for (const c of [...r.first, r.later]) {
    assert.equal(c.ok, false, JSON.stringify(c));
    assert.deepEqual([c.name, c.kind, c.attempts], ["TileError", "cors", 1], JSON.stringify(c));
    assert.match(c.message, /without CORS headers/);
    for (const fix of ["Access-Control-Allow-Origin", "adapter", "tilefetch/worker"])
      assert.ok(c.message.includes(fix), `the message names ${fix}: ${c.message}`);
  }
  const first = suite.srv.requests(`${run}/4/1/1`) + suite.srv.requests(`${run}/4/1/2`);
  assert.ok(first <= 3, `the first two calls (at once) cost ${first} requests: one each and one shared check`);
  for (const key of ["4/1/1", "4/1/2"]) assert.ok(suite.srv.requests(`${run}/${key}`) <= 2, `${key}: at most 2 requests`);
  assert.equal(suite.srv.requests(`${run}/4/1/3`), 1, "a later call to the host sends one request");
  assert.equal(r.stats.corsRefused, true, "stats() shows the host without CORS");
  assert.equal(r.stats.breaker.state, "closed", "the breaker does not count it as down");
  assert.equal(r.corsEvents, 1, "one cors event");
  assert.notEqual(r.down.kind, "cors", JSON.stringify(r.down));
  assert.equal(r.down.kind === "network" || r.down.causeKind === "network", true, `a host that is down: ${JSON.stringify(r.down)}`);
  t.diagnostic(
    `first calls ${r.first.map((c) => Math.round(c.ms)).join(" / ")} ms (${first} requests for both), a later one ${Math.round(r.later.ms)} ms (1 request); down host: ${r.down.kind}`,
  );
}

const urlsOf = (run) => ({
  urls: ["4/1/1", "4/1/2", "4/1/3"].map((k) => `${suite.srv.url}/tile/${k}.png?run=${run}&cors=0`),
  down: `${downUrl}/tile/4/1/1.png`,
});

test("page: fetchTile on a server without CORS headers ends as kind cors, naming the fix", { timeout: 30_000 }, async (t) => {
  const run = "nocors-page";
  const page = await blankPage();
  const r = await page.evaluate(scenario, urlsOf(run));
  check(t, r, run);
  assert.deepEqual(page.problems(), []);
});

test("dedicated worker: fetchTile on a server without CORS headers ends as kind cors", { timeout: 30_000 }, async (t) => {
  const run = "nocors-worker";
  const page = await blankPage();
  const r = await inWorker(page, scenario, urlsOf(run), suite.web.url);
  check(t, r, run);
  assert.deepEqual(page.problems(), []);
});

test("page: the same server with CORS headers is unaffected (a tile, one request, corsRefused false)", { timeout: 30_000 }, async () => {
  const run = "cors-page";
  const page = await blankPage();
  const r = await page.evaluate(async (url) => {
    const { TileClient } = await import("/pkg/browser.js");
    const client = new TileClient();
    const tile = await client.fetchTile(url);
    return { attempts: tile.attempts, stats: Object.values(client.stats())[0] };
  }, `${suite.srv.url}/tile/4/2/1.png?run=${run}`);
  assert.equal(r.attempts, 1);
  assert.equal(r.stats.corsRefused, false);
  assert.equal(suite.srv.requests(run), 1);
});

// The adapters' loads (pkg/without-cors.js) with a `load` of the test's own that makes each
// attempt with the `fetch` option it is given (or a fetch) and records how it went: through
// `fetch` or as an image (the page's `fetch` and `Image` stand-ins answer after 50 ms; the
// origin's CORS answer is whether `fetch` resolved). Three tiles at once of another origin, a
// retry of one after its answer, an origin whose first tile hangs, and the page's own origin.
test("adapters: another origin's first tile asks with fetch and the others load as images at once, through fetch once it is known; the page's own origin's tiles do not wait", {
  timeout: 30_000,
}, async () => {
  const page = await blankPage();
  const r = await page.evaluate(async (otherOrigin) => {
    const { loadTile } = await import("/pkg/without-cors.js");
    const t0 = performance.now();
    const calls = [];
    const hangs = (url) => url.includes("hung") && url.endsWith("/1.png");
    globalThis.fetch = (url) => {
      calls.push({ url: String(url), via: "fetch", at: performance.now() - t0 });
      return new Promise((resolve) => (hangs(String(url)) ? null : setTimeout(() => resolve(new Response("tile")), 50)));
    };
    globalThis.Image = class extends EventTarget {
      naturalWidth = 1;
      set src(url) {
        if (url.startsWith("data:")) return;
        calls.push({ url, via: "image", at: performance.now() - t0 });
        setTimeout(() => this.dispatchEvent(new Event("load")), 50);
      }
      decode() {
        return Promise.resolve();
      }
    };
    // The adapter's load: one attempt, or two when `again` or `stopped` (a retry); a retry of
    // `stopped` through fetch meets a server that stopped sending CORS headers (the core's
    // `cors` TileError).
    const load = async (url, signal, extra) => {
      const attempt = () => (extra?.fetch ?? globalThis.fetch)(url, { signal });
      await attempt();
      if (url.includes("again") || url.includes("stopped")) {
        await attempt();
        if (url.includes("stopped") && calls.at(-1).via === "fetch") throw Object.assign(new Error("no CORS headers"), { kind: "cors" });
      }
      return { empty: false };
    };
    const signal = new AbortController().signal;
    const tiles = (base, names) => Promise.all(names.map((n) => loadTile(load, `${base}/tile/4/1/${n}.png`, signal, {})));
    const other = await tiles(otherOrigin, ["1", "2", "again"]);
    const stopped = await tiles("http://127.0.0.3:9", ["1", "stopped"]);
    tiles("http://127.0.0.2:9/hung", ["1"]);
    await tiles("http://127.0.0.2:9/hung", ["2", "3"]);
    await tiles(location.origin, ["1", "2", "3"]);
    const shown = (loads) => loads.map((t) => (t.image ? "image" : "tile"));
    return { calls, here: location.origin, shown: shown(other), stoppedShown: shown(stopped) };
  }, "http://127.0.0.1:9");
  const of = (origin) => r.calls.filter((c) => new URL(c.url).origin === origin);
  const [other, hung, own] = [of("http://127.0.0.1:9"), of("http://127.0.0.2:9"), of(r.here)];
  assert.deepEqual(
    other.map((c) => [c.url.split("/").pop(), c.via]),
    [
      ["1.png", "fetch"],
      ["2.png", "image"],
      ["again.png", "image"],
      ["again.png", "fetch"],
    ],
    `another origin: the first tile asks with fetch, the others load as images at once; a retry after the answer goes through fetch: ${JSON.stringify(other)}`,
  );
  assert.ok(other[2].at - other[0].at < 20, `the others did not wait for the first: ${JSON.stringify(other)}`);
  assert.deepEqual(r.shown, ["tile", "image", "tile"], "what each load gave the map");
  assert.deepEqual(
    of("http://127.0.0.3:9").map((c) => [c.url.split("/").pop(), c.via]),
    [
      ["1.png", "fetch"],
      ["stopped.png", "image"],
      ["stopped.png", "fetch"],
      ["stopped.png", "image"],
      ["stopped.png", "image"],
    ],
    "a retry through fetch that meets no CORS headers: the tile loads as an image (the stand-in load tries twice)",
  );
  assert.deepEqual(r.stoppedShown, ["tile", "image"]);
  assert.deepEqual(
    hung.map((c) => [c.url.split("/").pop(), c.via]),
    [
      ["1.png", "fetch"],
      ["2.png", "image"],
      ["3.png", "image"],
    ],
    `an origin whose first tile hangs: its view loads as images meanwhile: ${JSON.stringify(hung)}`,
  );
  assert.deepEqual(
    own.map((c) => c.via),
    ["fetch", "fetch", "fetch"],
    `the page's origin: no first contact: ${JSON.stringify(own)}`,
  );
  assert.ok(own[2].at - own[0].at < 20, `the page's origin: every tile at once: ${JSON.stringify(own)}`);
  assert.deepEqual(page.problems(), []);
});

// What Leaflet's adapter asks before it makes a tile's element (`likelyImage`): an <img> for a
// tile that will most likely come as an image, a canvas for one that will come as bytes.
test("adapters: a tile is likely an image while its origin is not known to send CORS headers, not once it is, nor on the page's origin", {
  timeout: 30_000,
}, async () => {
  const page = await blankPage();
  const r = await page.evaluate(async () => {
    const { likelyImage, loadTile } = await import("/pkg/without-cors.js");
    globalThis.fetch = () => new Promise((resolve) => setTimeout(() => resolve(new Response("tile")), 20));
    const load = async (url, signal, extra) => {
      await (extra?.fetch ?? globalThis.fetch)(url, { signal });
      return { empty: false };
    };
    const url = "http://127.0.0.4:9/tile/4/1/1.png";
    const before = likelyImage(url);
    const withCrossOrigin = likelyImage(url, "anonymous");
    await loadTile(load, url, new AbortController().signal, {}); // the first contact: CORS passed
    return { before, withCrossOrigin, after: likelyImage(url), own: likelyImage(`${location.origin}/tile/4/1/1.png`) };
  });
  assert.deepEqual(r, { before: true, withCrossOrigin: false, after: false, own: false });
  assert.deepEqual(page.problems(), []);
});

/**
 * Puts a stand-in for `Image` in `page`: an element that "loads" any address but a data: URL
 * `window.__imageLoadMs` (10) after its src is set, or fails its first load where
 * `window.__imageFailsOnce(url)` says so; each load is recorded in `window.__imageLoads` as
 * `{ image, tile }` (its id, the address's last segment). Its `decode()` calls are counted in
 * `window.__decodes`, and never settle while `window.__decodeHangs` is set.
 */
async function installFakeImage(page) {
  await page.evaluate(() => {
    const failed = new Set();
    let made = 0;
    window.__imageLoads = [];
    window.__imageFailsOnce = () => false;
    window.Image = class FakeImage extends EventTarget {
      id = ++made;
      naturalWidth = 1;
      address = "";
      get src() {
        return this.address;
      }
      set src(url) {
        this.address = url;
        if (url.startsWith("data:")) return;
        window.__imageLoads.push({ image: this.id, tile: url.split("/").pop() });
        const fails = window.__imageFailsOnce(url) && !failed.has(url);
        if (fails) failed.add(url);
        setTimeout(() => this.dispatchEvent(new Event(fails ? "error" : "load")), window.__imageLoadMs ?? 10);
      }
      decode() {
        window.__decodes = (window.__decodes ?? 0) + 1;
        return window.__decodeHangs ? new Promise(() => {}) : Promise.resolve();
      }
    };
  });
}

// Leaflet's adapter hands its tile's own <img> to `loadTile` (`element`): the tile is shown as its
// image loads, as Leaflet's own loader shows it, with no second element to take it from.
test("adapters: a tile's first image load goes into the caller's element, a retry into one of its own; a tile shown again comes from an image the page kept", {
  timeout: 30_000,
}, async () => {
  const page = await blankPage();
  await installFakeImage(page);
  const r = await page.evaluate(async () => {
    const { loadTile, likelyImage, keepsElement, copyKeptElement } = await import("/pkg/without-cors.js");
    const loads = window.__imageLoads;
    const clientCalls = [];
    // An "again" tile's first image fails (a retry follows).
    window.__imageFailsOnce = (url) => url.includes("again");
    // The first contact answers with CORS passed after 150 ms: the others load meanwhile.
    globalThis.fetch = () => new Promise((resolve) => setTimeout(() => resolve(new Response("tile")), 150));
    const gone = new Image();
    const load = async (url, signal, extra) => {
      clientCalls.push(url.split("/").pop());
      const attempt = () => (extra?.fetch ?? globalThis.fetch)(url, { signal });
      try {
        await attempt();
      } catch (error) {
        if (!url.includes("again")) throw error;
        await attempt();
      }
      // Tile 4's element is emptied (Leaflet removed the tile) after its image loaded, before
      // the load ends.
      if (url.endsWith("/4.png") && gone.src.endsWith("/4.png")) gone.src = "data:image/gif;base64,R0lGODlhAQABAAAAACw=";
      return { empty: false };
    };
    const signal = new AbortController().signal;
    const base = "http://127.0.0.5:9/tile/4/1";
    const own = new Image();
    const ownAgain = new Image();
    const six = new Image();
    const [, viaOwn, viaNone, retried] = await Promise.all([
      loadTile(load, `${base}/1.png`, signal, {}),
      loadTile(load, `${base}/2.png`, signal, { element: own }),
      loadTile(load, `${base}/3.png`, signal, {}),
      loadTile(load, `${base}/again.png`, signal, { element: ownAgain }),
      loadTile(load, `${base}/4.png`, signal, { element: gone }),
      loadTile(load, `${base}/6.png`, signal, { element: six }),
    ]);
    const first = loads.splice(0);
    clientCalls.splice(0);
    // The tiles shown as images come back as images (an <img> for Leaflet, not a canvas); a tile
    // of the same origin not shown before, through fetch.
    const likely = [`${base}/2.png`, `${base}/3.png`, `${base}/5.png`].map((u) => likelyImage(u));
    // Leaflet's adapter leaves a kept element as it is when its tile goes; the tile asked for
    // again comes back as the kept element, and the library's new element takes its address.
    const keeps = { own: keepsElement(own), ownAgain: keepsElement(ownAgain), gone: keepsElement(gone) };
    const next = new Image();
    const shownAgain = await loadTile(load, `${base}/2.png`, signal, { element: next });
    const kept = await loadTile(load, `${base}/3.png`, signal, {});
    const afterGone = await loadTile(load, `${base}/4.png`, signal, { element: new Image() });
    const later = loads.splice(0);
    const callsShownAgain = clientCalls.splice(0);
    // A layer class that removes tiles its own way: the adapter has the kept element copied (an
    // image of its address, made at once), then the library empties the element.
    copyKeptElement(own);
    own.src = "data:image/gif;base64,R0lGODlhAQABAAAAACw=";
    const copied = loads.splice(0);
    const afterCopy = await loadTile(load, `${base}/2.png`, signal, { element: new Image() });
    // A kept element emptied with no copy: its tile is no longer shown from memory, it goes
    // through the client.
    six.src = "data:image/gif;base64,R0lGODlhAQABAAAAACw=";
    const likelyEmptied = likelyImage(`${base}/6.png`);
    const emptied = await loadTile(load, `${base}/6.png`, signal, { element: new Image() });
    return {
      first,
      keeps,
      ids: { own: own.id, ownAgain: ownAgain.id, gone: gone.id },
      viaOwn: viaOwn.image?.id,
      viaNoneIsNew: viaNone.image instanceof Image && ![own.id, ownAgain.id].includes(viaNone.image.id),
      retried: retried.image?.id,
      shownAgain: shownAgain.image?.id,
      keptIsSame: kept.image === viaNone.image,
      afterGone: { image: afterGone.image?.id, src: afterGone.image?.src.split("/").pop() },
      copied: { loads: copied, image: afterCopy.image?.id, src: afterCopy.image?.src.split("/").pop(), keeps: keepsElement(own) },
      emptied: { image: emptied.image?.id ?? null, tile: emptied.tile !== undefined, likely: likelyEmptied },
      later,
      afterCopyLoads: loads,
      clientCalls: callsShownAgain,
      emptiedCalls: clientCalls,
      likely,
    };
  });
  const { own, ownAgain, gone } = r.ids;
  assert.equal(r.viaOwn, own, "the tile loaded into the element it was given");
  assert.ok(r.viaNoneIsNew, "without an element, an image of its own");
  assert.deepEqual(
    r.first.filter((l) => l.tile === "again.png").map((l) => l.image === ownAgain),
    [true, false],
    `the first image load into the element given, the retry into another: ${JSON.stringify(r.first)}`,
  );
  assert.notEqual(r.retried, ownAgain, "the tile is the retry's image");
  assert.deepEqual(
    r.first.filter((l) => l.tile === "2.png").map((l) => l.image),
    [own],
    `no image made beside the element the tile loaded into: ${JSON.stringify(r.first)}`,
  );
  assert.deepEqual(
    r.keeps,
    { own: true, ownAgain: false, gone: false },
    "kept: the element its tile loaded into, not one a retry replaced, nor one emptied before its load ended",
  );
  assert.equal(r.shownAgain, own, "shown again: the element kept, not loaded into the next one");
  assert.deepEqual(r.later, [], "shown again: no image load, no fetch");
  assert.deepEqual(r.clientCalls, [], "shown again from memory: no call through the client");
  assert.deepEqual(r.likely, [true, true, false], "likely images: the tiles shown as images, not a tile of the origin not shown before");
  assert.ok(
    r.afterGone.image !== gone && r.afterGone.src === "4.png",
    `a tile whose element was emptied before its load ended is shown again from the address it loaded: ${JSON.stringify(r.afterGone)}`,
  );
  assert.ok(
    r.first.some((l) => l.image === r.afterGone.image && l.tile === "4.png"),
    `its image took the address when the tile was handed over: ${JSON.stringify(r.first)}`,
  );
  assert.ok(r.keptIsSame, "a tile loaded into an image of its own is shown again as that image");
  assert.deepEqual(
    r.copied.loads.map((l) => l.tile),
    ["2.png"],
    `a kept element copied: one image of its address, made at once: ${JSON.stringify(r.copied)}`,
  );
  assert.ok(
    r.copied.image === r.copied.loads[0].image && r.copied.src === "2.png" && !r.copied.keeps,
    `then shown again as that copy: ${JSON.stringify(r.copied)}`,
  );
  assert.deepEqual(r.afterCopyLoads, [], "shown again from the copy: no image load");
  assert.deepEqual(r.emptied, { image: null, tile: true, likely: false }, "a kept element emptied with no copy: the tile through the client, not an image");
  assert.deepEqual(r.emptiedCalls, ["6.png"], "one call through the client");
  assert.deepEqual(page.problems(), []);
});

// Leaflet's own loader shows its <img> tile once loaded (the browser decodes it as it paints),
// OpenLayers' once decoded (ol/Image's listenImage): an image load hands the tile over as the
// library's own loader would (`decoded`), here with a decode() that never settles.
test("adapters: an image load hands its tile over once loaded where the library's own loader does (Leaflet), once decoded where it decodes (OpenLayers)", {
  timeout: 30_000,
}, async () => {
  const page = await blankPage();
  await installFakeImage(page);
  const r = await page.evaluate(async () => {
    const { loadTile } = await import("/pkg/without-cors.js");
    window.__decodeHangs = true;
    // The first contact answers after 150 ms: the second tile of each origin loads as an image.
    globalThis.fetch = () => new Promise((resolve) => setTimeout(() => resolve(new Response("tile")), 150));
    const load = async (url, signal, extra) => {
      await (extra?.fetch ?? globalThis.fetch)(url, { signal });
      return { empty: false };
    };
    const signal = new AbortController().signal;
    const within = (promise, ms) =>
      Promise.race([promise.then((t) => (t.image ? "image" : "tile")), new Promise((resolve) => setTimeout(() => resolve("pending"), ms))]);
    const twoTiles = (base, decoded) =>
      Promise.all([`${base}/1.png`, `${base}/2.png`].map((url) => within(loadTile(load, url, signal, { element: new Image(), decoded }), 1000)));
    const [leaflet, openlayers] = await Promise.all([twoTiles("http://127.0.0.6:9/tile/4/1", false), twoTiles("http://127.0.0.7:9/tile/4/1", true)]);
    return { leaflet, openlayers, decodes: window.__decodes ?? 0 };
  });
  assert.deepEqual(r.leaflet, ["tile", "image"], "without decoding, the image tile is handed over once loaded");
  assert.deepEqual(r.openlayers, ["tile", "pending"], "decoding, the image tile waits for its decode()");
  assert.equal(r.decodes, 1, "one decode(): OpenLayers' image tile's");
  assert.deepEqual(page.problems(), []);
});

// Two loads of one tile at once (two layers of one template, or a tile asked again while it
// loads): the core serves the second from the first's request (identical calls join one flight),
// so the second's own `fetch`, its image load, is never called and its answer is the first's
// stand-in body. It is shown all the same, as an image of its own, not as that blank stand-in.
test("adapters: two loads of one tile at once through the real client each end as the tile's image, not the stand-in", { timeout: 30_000 }, async () => {
  const page = await blankPage();
  await installFakeImage(page);
  const r = await page.evaluate(async () => {
    const { loadTile } = await import("/pkg/without-cors.js");
    const { TileClient } = await import("/pkg/browser.js");
    window.__imageLoadMs = 30;
    // The origin's first contact answers after 200 ms (CORS passed): the tiles below load meanwhile.
    const tilePng = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg=="), (c) =>
      c.charCodeAt(0),
    );
    globalThis.fetch = (_input, init) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => resolve(new Response(tilePng, { headers: { "content-type": "image/png" } })), 200);
        init?.signal?.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(init.signal.reason);
        });
      });
    const client = new TileClient({ hedge: "off" });
    const load = (url, signal, extra) => client.fetchTile(url, { signal, ...extra });
    const signal = new AbortController().signal;
    const base = "http://127.0.0.7:9/tile/5/1";
    const [, a, b] = await Promise.all([
      loadTile(load, `${base}/1.png`, signal, {}),
      loadTile(load, `${base}/2.png`, signal, {}),
      loadTile(load, `${base}/2.png`, signal, {}),
    ]);
    const what = (x) => (x.image ? { image: x.image.src.split("/").pop() } : { tile: x.tile?.data?.length });
    return { a: what(a), b: what(b), same: a.image === b.image };
  });
  assert.deepEqual(r.a, { image: "2.png" }, "the first load: its image");
  assert.deepEqual(r.b, { image: "2.png" }, "the second load, served by the first's request: an image of the tile too, not the stand-in");
  assert.deepEqual(page.problems(), []);
});

// An image element fires `load` (and its decode() resolves) for a PNG cut short that ends
// cleanly, the top rows shown and the rest blank, which the library's own loader shows as
// loaded; a fetched body's end the core checks. While an origin's CORS answer is on its way its
// tiles load as images: one cut short is retried, not handed over; from a server known to send
// no CORS headers it is shown as the library's own loader shows it, with no second request.
test("adapters: a first view's image cut short is retried, not shown; a server without CORS headers gets its images as they come", {
  timeout: 30_000,
}, async () => {
  const port = new URL(suite.srv.url).port;
  const page = await suite.blankPage(failedLoadFrom(`http://localhost:${port}`));
  const run = `cut${Date.now()}`;
  const r = await page.evaluate(
    async ({ corsBase, bareBase, run }) => {
      const { loadTile } = await import("/pkg/without-cors.js");
      const { TileClient } = await import("/pkg/browser.js");
      const client = new TileClient({ hedge: "off" });
      const retried = [];
      const load = (url, signal, extra) => client.fetchTile(url, { signal, ...extra, onRetry: () => retried.push(url.split("/").pop()) });
      const signal = new AbortController().signal;
      const whole = async (x) => {
        if (x.tile) {
          return { via: "tile", whole: new TextDecoder("latin1").decode(x.tile.data.slice(-8)).startsWith("IEND"), attempts: x.tile.attempts };
        }
        return {
          via: "image",
          whole: await createImageBitmap(x.image).then(
            (bitmap) => bitmap.close() ?? true,
            () => false,
          ),
        };
      };
      const tile = (url) => loadTile(load, url, signal, { decoded: false });
      // The origin's first contact answers after 300 ms; tile 2 loads as an image meanwhile, its
      // first answer cut short (its retry, by the default backoff, due before 300 ms).
      const [, cut] = await Promise.all([tile(`${corsBase}/1.png?run=${run}&delay=300`), tile(`${corsBase}/2.png?run=${run}&f=truncate&n=1`)]);
      // Another origin (the same server by another name), found without CORS headers by its
      // first tile while tile 2's image, cut short, is on its way (its answer 500 ms late); then
      // tile 3, cut short, of the origin known without them.
      const [, bareFirstView] = await Promise.all([
        tile(`${bareBase}/1.png?run=${run}x&cors=0`),
        tile(`${bareBase}/2.png?run=${run}x&cors=0&f=truncate&n=1&delay=500`),
      ]);
      const bare = await tile(`${bareBase}/3.png?run=${run}x&cors=0&f=truncate&n=1`);
      return { cut: await whole(cut), bareFirstView: await whole(bareFirstView), bare: await whole(bare), retried };
    },
    { corsBase: `${suite.srv.url}/tile/6/1`, bareBase: `http://localhost:${port}/tile/6/1`, run },
  );
  const answers = (key) => suite.srv.log.filter((e) => e.key === key).map((e) => `${e.headers["sec-fetch-dest"]} ${e.fault}`);
  const cutAnswers = answers(`${run}/6/1/2`);
  // The page hands a second image load of the address the cut image it has: the retry waits for
  // the origin's answer and goes through fetch, one attempt after the image's.
  assert.deepEqual(r.cut, { via: "tile", whole: true, attempts: 2 }, `the tile handed over is whole: answers ${JSON.stringify(cutAnswers)}`);
  assert.deepEqual(cutAnswers, ["image truncate", "empty none"], "an image cut short, then the tile through fetch");
  for (const [shown, key, when] of [
    [r.bareFirstView, "2", "found without them while the image loaded"],
    [r.bare, "3", "known without them"],
  ]) {
    assert.deepEqual(shown, { via: "image", whole: false }, `a server ${when}: the image as it came, as the own loader shows it`);
    assert.deepEqual(answers(`${run}x/6/1/${key}`), ["image truncate"], `a server ${when}: one request for the cut tile`);
  }
  assert.deepEqual(
    r.retried.map((tile) => tile.split("?")[0]),
    ["2.png"],
    `one retry, the cut tile's of the origin with CORS headers: ${JSON.stringify(r.retried)}`,
  );
  assert.deepEqual(page.problems(), []);
});
