// The real map servers of tests/real-servers/, as they ship, behind the real OpenLayers and Leaflet
// in Chromium through tilefetch's adapters: MapServer 8's CGI (no CORS headers) through its tile
// mode (an XYZ template), MapProxy 7.0.0 (CORS headers on) through its XYZ service. Every tile
// of the view is shown; a mistyped WMS layer (MapServer answers an exception report, which no
// image decodes) still ends as an error within the deadline, not in endless retries.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { setUp, viewTiles, waitSettled, metBefore } from "./adapters-common.mjs";
import { screenshot } from "./helpers.mjs";
import { startFrontProxy } from "../real-servers/front-proxy.mjs";
import { startMapProxy } from "../real-servers/mapproxy/server.mjs";
import { startMapServer } from "../real-servers/mapserver/cgi.mjs";

const LIBS = [
  { entry: "ol", spec: { kind: "xyz" } },
  { entry: "leaflet", spec: {} },
];
const ZOOM = 2;
const CENTER = [512, 512];
// mapserv starts a process per request: a cold one under CI's load may take a second.
// No hedges: these cases count requests, and mapserv's CGI starts a process per request, which
// under a loaded machine answered past the cold hedge delay (a clean-clone CI counted 12 for 8).
const OPTIONS = { deadlineMs: 6000, attemptTimeoutMs: 3000, hedge: "off" };

let mapserver;
let mapproxy;
let msFront;
let mpFront;
const envs = {};

before(async () => {
  [mapserver, mapproxy] = await Promise.all([startMapServer(), startMapProxy()]);
  [msFront, mpFront] = await Promise.all([startFrontProxy(mapserver.url), startFrontProxy(mapproxy.url)]);
  // One uncounted tile from each server first: a cold mapserv's first requests are slower than
  // any tile after them (as in tests/real-servers/).
  await Promise.all([
    fetch(`${mapserver.url}/cgi-bin/mapserv?mode=tile&tilemode=gmap&tile=0+0+0&layers=land`).then((r) => r.arrayBuffer()),
    fetch(`${mapproxy.url}/tiles/osm/webmercator/0/0/0.png`).then((r) => r.arrayBuffer()),
  ]);
  for (const lib of LIBS) envs[lib.entry] = await setUp(lib.entry);
  envs.maplibre = await setUp("maplibre", { webgl: true });
  envs.cesium = await setUp("cesium", { webgl: true });
});
after(async () => {
  for (const env of Object.values(envs)) await env.close();
  await Promise.all([msFront?.stop(), mpFront?.stop()]);
  await Promise.all([mapserver?.stop(), mapproxy?.stop()]);
});

/**
 * Opens `lib`'s map at ZOOM over `template` and waits for every view tile to settle; `met`: the
 * page has met the server before (see metBefore).
 */
async function view(lib, template, shot, { met = false, spec = {} } = {}) {
  const env = envs[lib.entry];
  const page = await env.open();
  try {
    const tiles = viewTiles(ZOOM, CENTER);
    if (met) await metBefore(page, template);
    await page.evaluate((s) => window.harness.create(s), { ...lib.spec, ...spec, template, zoom: ZOOM, center: CENTER, options: OPTIONS });
    const states = await waitSettled(
      page,
      tiles.map((x) => x.key),
      { timeout: 30_000 },
    );
    await screenshot(page, shot);
    const problems = page.problems().filter((p) => !/Failed to load resource|has been blocked by CORS policy/.test(p));
    const pixels = await page.locator("#map").screenshot();
    return { tiles, states, problems, pixels };
  } finally {
    await page.closeContext();
  }
}

for (const lib of LIBS) {
  test(`${lib.entry}: MapServer's CGI as it ships (no CORS headers): every tile of the view shown`, { timeout: 60_000 }, async (t) => {
    const before = msFront.requests.length;
    const template = `${msFront.url}/cgi-bin/mapserv?mode=tile&tilemode=gmap&tile={x}+{y}+{z}&layers=land,cities&run=${lib.entry}`;
    const { tiles, states, problems } = await view(lib, template, `real-mapserver-${lib.entry}`);
    for (const tile of tiles) assert.equal(states[tile.key].state, "loaded", `${tile.key}: ${JSON.stringify(states[tile.key])}`);
    const sent = msFront.requests.slice(before).filter((r) => r.url.includes(`run=${lib.entry}`));
    const asked = new Set(sent.map((r) => r.url.replace(/[?&]_tf=\d+/, ""))).size;
    t.diagnostic(`${tiles.length} tiles in view, ${asked} asked for, ${sent.length} requests reached mapserv`);
    assert.ok(sent.length <= asked + 2, `one request per tile, and the first tile's withheld fetch and check: ${sent.length} for ${asked}`);
    assert.deepEqual(problems, []);
  });

  test(`${lib.entry}: MapServer, a mistyped WMS layer ends as an error within the deadline`, { timeout: 60_000 }, async (t) => {
    const before = msFront.requests.length;
    const template =
      `${msFront.url}/cgi-bin/mapserv?SERVICE=WMS&VERSION=1.1.1&REQUEST=GetMap&LAYERS=nosuch&STYLES=&SRS=EPSG:3857` +
      `&BBOX=-20037508.34,0,0,20037508.34&WIDTH=256&HEIGHT=256&FORMAT=image/png&tile={z}-{x}-{y}&run=bad-${lib.entry}`;
    const t0 = Date.now();
    const { tiles, states } = await view(lib, template, `real-mapserver-bad-layer-${lib.entry}`);
    for (const tile of tiles) assert.equal(states[tile.key].state, "error", `${tile.key}: ${JSON.stringify(states[tile.key])}`);
    const sent = msFront.requests.slice(before).filter((r) => r.url.includes(`run=bad-${lib.entry}`)).length;
    t.diagnostic(`${tiles.length} tiles ended as errors after ${Date.now() - t0} ms, ${sent} requests`);
    assert.ok(Date.now() - t0 < OPTIONS.deadlineMs + 10_000, "within the deadline");
  });

  test(`${lib.entry}: MapProxy as it ships (CORS headers on): one request each; the first tile through fetch, and every tile once the page has met it`, {
    timeout: 60_000,
  }, async (t) => {
    for (const met of [false, true]) {
      const before = mpFront.requests.length;
      const run = `${lib.entry}${met ? "-met" : ""}`;
      const template = `${mpFront.url}/tiles/osm/webmercator/{z}/{x}/{y}.png?run=${run}`;
      const { tiles, states, problems } = await view(lib, template, `real-mapproxy-${run}`, { met });
      for (const tile of tiles) assert.equal(states[tile.key].state, "loaded", `${tile.key}: ${JSON.stringify(states[tile.key])}`);
      const sent = mpFront.requests.slice(before).filter((r) => r.url.includes(`run=${run}`));
      const asked = new Set(sent.map((r) => r.url)).size;
      const cors = sent.filter((r) => r.headers.origin !== undefined).length;
      t.diagnostic(
        `${met ? "met before" : "first visit"}: ${tiles.length} tiles in view, ${asked} asked for, ${sent.length} requests reached MapProxy, ${cors} of them CORS requests (fetch)`,
      );
      assert.equal(sent.length, asked, "one request per tile");
      if (met) assert.equal(cors, sent.length, "CORS requests (fetch), not images");
      // Not met before: its first tile asks with fetch, the others load as images meanwhile.
      else assert.ok(cors >= 1, "the first tile through fetch");
      assert.deepEqual(problems, []);
    }
  });
}

// OGC layers beside each library's own loader: Leaflet's WMS layer (L.tileLayer.wms) through
// createWmsLayer, OpenLayers' TileWMS and WMTS sources through createTileLoadFunction; against
// MapProxy (WMS and WMTS, CORS headers on) and MapServer (WMS, none).
const OGC_LAYERS = [
  { lib: "leaflet", kind: "wms", server: "mapproxy" },
  { lib: "leaflet", kind: "wms", server: "mapserver" },
  // A plugin's layer class (a WMTS layer written as Leaflet plugins write one) through routeTileLayer.
  { lib: "leaflet", kind: "wmts", server: "mapproxy" },
  { lib: "ol", kind: "wms", server: "mapproxy" },
  { lib: "ol", kind: "wms", server: "mapserver" },
  { lib: "ol", kind: "wmts", server: "mapproxy" },
  // MapLibre: a raster source of a GetMap template with {bbox-epsg-3857}, through the protocol.
  // Not MapServer's: WebGL draws no image its page cannot read, whoever loads it.
  { lib: "maplibre", kind: "wms", server: "mapproxy" },
];
/** A GetMap URL template with MapLibre's {bbox-epsg-3857} (and the tile's z/x/y, for the harness's records). */
const getMapTemplate = (url, { layers, format }) =>
  `${url}&SERVICE=WMS&VERSION=1.1.1&REQUEST=GetMap&LAYERS=${layers}&STYLES=&SRS=EPSG:3857&BBOX={bbox-epsg-3857}` +
  `&WIDTH=256&HEIGHT=256&FORMAT=${encodeURIComponent(format)}&tile=/{z}/{x}/{y}.png`;
const OGC_SERVERS = {
  mapproxy: { front: () => mpFront, path: "/service?", wms: { layers: "osm", format: "image/png" }, cors: true },
  mapserver: { front: () => msFront, path: "/cgi-bin/mapserv?", wms: { layers: "land,cities", format: "image/png" }, cors: false },
};
for (const layer of OGC_LAYERS) {
  const server = OGC_SERVERS[layer.server];
  const title = `${layer.lib} ${layer.kind.toUpperCase()}: ${layer.server}'s tiles through tilefetch show the own loader's pixels${server.cors ? " with its requests" : ""}`;
  test(title, { timeout: 90_000 }, async (t) => {
    const lib = LIBS.find((l) => l.entry === layer.lib) ?? { entry: layer.lib, spec: {} };
    const runs = {};
    for (const own of [true, false]) {
      const front = server.front();
      // The own loader's view is the reference and its loader does not retry: a real server's
      // one-off failure there (a CGI run that broke, in one clean-clone CI run) gets one more
      // reference view, named in the output. tilefetch's view gets no second chance.
      const tries = own ? 2 : 1;
      let before;
      let run;
      let seen;
      for (let attempt = 1; attempt <= tries; attempt++) {
        before = front.requests.length;
        run = `${layer.lib}-${layer.kind}-${layer.server}-${own ? "own" : "tilefetch"}${attempt > 1 ? `-again${attempt}` : ""}`;
        const service = `${front.url}${server.path}run=${run}`;
        const template = layer.lib === "maplibre" ? getMapTemplate(service, server.wms) : service;
        seen = await view(lib, template, `real-${run}`, { spec: { kind: layer.kind, own, wms: server.wms } });
        const failed = seen.tiles.filter((tile) => seen.states[tile.key].state !== "loaded");
        if (failed.length === 0 || attempt === tries) break;
        const answers = front.requests.slice(before).filter((r) => r.url.includes(`run=${run}`));
        t.diagnostic(
          `own loader's reference view: ${failed.length} tile(s) not loaded (${failed.map((x) => x.key).join(", ")}); ` +
            `the server's statuses: ${answers.map((r) => r.status).join(",")}; viewed again`,
        );
      }
      const { tiles, states, problems, pixels } = seen;
      const sent = front.requests.slice(before).filter((r) => r.url.includes(`run=${run}`));
      for (const tile of tiles) {
        assert.equal(
          states[tile.key].state,
          "loaded",
          `${run} ${tile.key}: ${JSON.stringify(states[tile.key])}; the server's statuses: ${sent.map((r) => r.status).join(",")}`,
        );
      }
      const request = layer.kind === "wms" ? /REQUEST=GetMap.*BBOX=|BBOX=.*REQUEST=GetMap/i : /REQUEST=GetTile/i;
      assert.ok(
        sent.every((r) => request.test(r.url)),
        `${layer.kind} requests: ${sent[0]?.url}`,
      );
      runs[own ? "own" : "tilefetch"] = { sent: sent.length, asked: new Set(sent.map((r) => r.url)).size, pixels, problems };
    }
    const { own, tilefetch } = runs;
    t.diagnostic(`requests: own ${own.sent} (${own.asked} tiles), tilefetch ${tilefetch.sent} (${tilefetch.asked} tiles)`);
    assert.equal(tilefetch.asked, own.asked, "the same tiles asked for");
    assert.ok(tilefetch.pixels.equals(own.pixels), "the map's pixels equal the own loader's");
    // Without CORS headers, the first tile's fetch and its check find that out (as for the XYZ
    // template above), and the tiles load as images.
    if (server.cors) assert.ok(tilefetch.sent <= own.sent * 1.05, `requests: ${tilefetch.sent} for the own loader's ${own.sent}`);
    else assert.ok(tilefetch.sent <= own.sent + 2, `requests: ${tilefetch.sent} for the own loader's ${own.sent}`);
    assert.deepEqual(tilefetch.problems, []);
  });
}

for (const entry of ["leaflet", "ol"]) {
  test(`${entry} WMS: a GetMap of a layer MapProxy does not have ends each tile after one request, with its exception code and text`, {
    timeout: 60_000,
  }, async (t) => {
    const lib = LIBS.find((l) => l.entry === entry);
    const run = `${entry}-wms-nosuch`;
    const before = mpFront.requests.length;
    const template = `${mpFront.url}/service?run=${run}`;
    const { tiles, states } = await view(lib, template, `real-mapproxy-${run}`, {
      met: true,
      spec: { kind: "wms", wms: { layers: "nosuch", format: "image/png" } },
    });
    const sent = mpFront.requests.slice(before).filter((r) => r.url.includes(`run=${run}`));
    const first = states[tiles[0].key];
    t.diagnostic(`${tiles.length} tiles, ${sent.length} requests; the first: ${JSON.stringify(first)}`);
    for (const tile of tiles) {
      const s = states[tile.key];
      assert.equal(s.state, "error", `${tile.key}: ${JSON.stringify(s)}`);
      assert.deepEqual([s.isTileError, s.attempts], [true, 1], `${tile.key}: ${JSON.stringify(s)}`);
      assert.equal(s.exceptionCode, "LayerNotDefined", `${tile.key}: ${JSON.stringify(s)}`);
      assert.match(s.exceptionText ?? "", /nosuch/, `${tile.key}: the server's text`);
    }
    assert.equal(sent.length, tiles.length, "one request per tile");
  });
}

for (const layer of OGC_LAYERS.filter((l) => l.server === "mapproxy")) {
  const title = `${layer.lib} ${layer.kind.toUpperCase()}: MapProxy's tiles where each one's first request fails (503 or a reset): every tile shown, where the own loader leaves holes`;
  test(title, { timeout: 90_000 }, async (t) => {
    const lib = LIBS.find((l) => l.entry === layer.lib) ?? { entry: layer.lib, spec: {} };
    const server = OGC_SERVERS.mapproxy;
    const shown = {};
    let inView = 0;
    for (const own of [true, false]) {
      const before = mpFront.requests.length;
      const run = `${layer.lib}-${layer.kind}-fail-first-${own ? "own" : "tilefetch"}`;
      const service = `${mpFront.url}/fail-first${server.path}run=${run}`;
      const template = layer.lib === "maplibre" ? getMapTemplate(service, server.wms) : service;
      const { tiles, states } = await view(lib, template, `real-mapproxy-${run}`, { spec: { kind: layer.kind, own, wms: server.wms } });
      const sent = mpFront.requests.slice(before).filter((r) => r.url.includes(`run=${run}`));
      shown[own ? "own" : "tilefetch"] = tiles.filter((tile) => states[tile.key]?.state === "loaded").length;
      inView = tiles.length;
      t.diagnostic(
        `${own ? "own loader" : "tilefetch"}: ${shown[own ? "own" : "tilefetch"]} of ${tiles.length} tiles shown, ${sent.length} requests (${sent.filter((r) => r.failed).length} failed by the proxy)`,
      );
      if (!own) {
        for (const tile of tiles) assert.equal(states[tile.key].state, "loaded", `${tile.key}: ${JSON.stringify(states[tile.key])}`);
        assert.ok(sent.length <= 2 * tiles.length, `a retry a tile: ${sent.length} for ${tiles.length}`);
      }
    }
    // The own loaders do not retry a failed tile (one a library asks for again may show).
    assert.ok(shown.own <= inView / 2, `the own loader: ${shown.own} of ${inView} shown`);
  });
}

/**
 * CesiumJS over `template` (its provider of `kind`): waits until Cesium's globe has every imagery
 * tile it wants and every tile it asked for has settled, then returns the records of the tiles
 * it asked for and the canvas's pixels.
 */
async function cesiumView(template, kind, own, shot) {
  const page = await envs.cesium.open();
  try {
    await page.evaluate((s) => window.harness.create(s), { kind, own, template, wms: OGC_SERVERS.mapproxy.wms, zoom: ZOOM, center: CENTER, options: OPTIONS });
    const settled = () => {
      const { asked, tilesLoaded } = window.harness.progress();
      const states = window.harness.states();
      const open = asked.filter((key) => states[key]?.state === "loading");
      return tilesLoaded && asked.length > 0 && open.length === 0 ? { asked, states } : null;
    };
    const handle = await page.waitForFunction(settled, null, { timeout: 30_000, polling: 100 }).catch(() => null);
    const result = handle ? await handle.jsonValue() : await page.evaluate(() => ({ asked: window.harness.progress().asked, states: window.harness.states() }));
    await screenshot(page, shot);
    const pixels = await page.locator("#map").screenshot();
    return { ...result, settled: handle !== null, pixels };
  } finally {
    await page.closeContext();
  }
}

// CesiumJS's WMS and WMTS imagery providers, routed by routeImagery, beside Cesium's own loader,
// against MapProxy; and where every tile's first request fails.
for (const kind of ["wms", "wmts"]) {
  test(`cesium ${kind.toUpperCase()}: MapProxy's tiles through routeImagery show the own loader's pixels with its requests`, {
    timeout: 120_000,
  }, async (t) => {
    const runs = {};
    for (const own of [true, false]) {
      const before = mpFront.requests.length;
      const run = `cesium-${kind}-${own ? "own" : "tilefetch"}`;
      const { asked, states, settled, pixels } = await cesiumView(`${mpFront.url}/service?run=${run}`, kind, own, `real-mapproxy-${run}`);
      assert.ok(settled, `${run}: Cesium's globe settled`);
      for (const key of asked) assert.equal(states[key].state, "loaded", `${run} ${key}: ${JSON.stringify(states[key])}`);
      const sent = mpFront.requests.slice(before).filter((r) => r.url.includes(`run=${run}`));
      runs[own ? "own" : "tilefetch"] = { asked: asked.length, sent: sent.length, pixels };
    }
    const { own, tilefetch } = runs;
    t.diagnostic(`tiles Cesium asked for: own ${own.asked}, tilefetch ${tilefetch.asked}; requests: own ${own.sent}, tilefetch ${tilefetch.sent}`);
    assert.ok(tilefetch.pixels.equals(own.pixels), "the globe's pixels equal the own loader's");
    assert.ok(tilefetch.sent <= own.sent * 1.05, `requests: ${tilefetch.sent} for the own loader's ${own.sent}`);
  });

  test(`cesium ${kind.toUpperCase()}: MapProxy's tiles where each one's first request fails (503 or a reset): every tile shown, where the own loader leaves holes`, {
    timeout: 120_000,
  }, async (t) => {
    const failed = {};
    for (const own of [true, false]) {
      const run = `cesium-${kind}-fail-first-${own ? "own" : "tilefetch"}`;
      const { asked, states, settled } = await cesiumView(`${mpFront.url}/fail-first/service?run=${run}`, kind, own, `real-mapproxy-${run}`);
      failed[own ? "own" : "tilefetch"] = asked.filter((key) => states[key]?.state !== "loaded").length;
      t.diagnostic(`${own ? "own loader" : "tilefetch"}: ${failed[own ? "own" : "tilefetch"]} of ${asked.length} tiles Cesium asked for not shown`);
      if (!own) assert.ok(settled, "Cesium's globe settled");
    }
    assert.equal(failed.tilefetch, 0);
    assert.ok(failed.own > 0, "the own loader does not retry");
  });
}
