// The published package with OpenLayers in a Vite app: `npm pack` pkg/, install the tarball into
// a throwaway app that imports `tilefetch` and `tilefetch/openlayers` (the subpath export, whose
// `ol/TileState.js` import must resolve to the app's own ol, a peer dependency), `vite build`
// it and show a map of faulty tiles in Chromium.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { build } from "vite";
import { startFaultServer } from "../server/fault-server.mjs";
import { installPacked } from "../packed.mjs";
import { ROOT, assertBuilt, startStaticServer, launchBrowser, newCheckedPage, failedLoadFrom, pageResults, screenshot } from "./helpers.mjs";

let srv;
let tmp;
let web;
let browser;

before(async () => {
  assertBuilt();
  srv = await startFaultServer({ seed: 1 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-vite-ol-"));
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await web?.close();
  await srv?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const INDEX_HTML = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>tilefetch + OpenLayers: Vite build</title>
  <link rel="icon" href="data:,">
  <style>html, body { margin: 0; } #map { width: 512px; height: 512px; }</style>
  <script>
    window.__fail = (what) => { window.__results ??= { error: String(what) }; document.title = "FAILED"; };
    window.addEventListener("error", (e) => window.__fail(e.error?.stack ?? e.message));
    window.addEventListener("unhandledrejection", (e) => window.__fail(e.reason?.stack ?? e.reason));
  </script>
</head>
<body>
  <div id="map"></div>
  <script type="module" src="/main.js"></script>
</body>
</html>
`;

const MAIN_JS = `import "ol/ol.css";
import Map from "ol/Map.js";
import View from "ol/View.js";
import TileLayer from "ol/layer/Tile.js";
import XYZ from "ol/source/XYZ.js";
import { fetchTile, TileError } from "tilefetch";
import { createTileLoadFunction } from "tilefetch/openlayers";

const params = new URLSearchParams(location.search);
const server = params.get("server");
const run = params.get("run");

// the main entry works next to the adapter
const direct = await fetchTile(\`\${server}/tile/1/0/0.png?run=\${run}-direct\`);

const source = new XYZ({
  url: \`\${server}/tile/{z}/{x}/{y}.png?run=\${run}&f=503&n=1\`,
  transition: 0,
  tileLoadFunction: createTileLoadFunction({ baseDelayMs: 20, maxDelayMs: 100 }),
});
const counts = { loaded: 0, errors: [] };
source.on("tileloadend", () => counts.loaded++);
source.on("tileloaderror", (e) => counts.errors.push(String(e.tile.error)));
const map = new Map({ target: "map", layers: [new TileLayer({ source })], view: new View({ center: [0, 0], zoom: 1 }), controls: [] });
map.once("rendercomplete", () => {
  window.__results = { directStatus: direct.status, tileErrorIsClass: typeof TileError === "function", ...counts };
});
`;

test("vite build of an app importing tilefetch and tilefetch/openlayers → Chromium shows the map", { timeout: 90_000 }, async (t) => {
  const exportsField = JSON.parse(fs.readFileSync(path.join(ROOT, "pkg/package.json"), "utf8")).exports ?? {};
  assert.ok(exportsField["./openlayers"], 'pkg/package.json exports "./openlayers"');

  const { project: app, files } = await installPacked(tmp, "tilefetch-vite-ol-app");
  for (const f of ["openlayers.js", "openlayers.d.ts", "leaflet.js", "leaflet.d.ts", "maplibre.js", "maplibre.d.ts"]) {
    assert.ok(files.includes(f), `${f} is in the packed package: ${files.join(", ")}`);
  }
  // ol as the app's own dependency (a link to the repo's copy: no network in tests).
  fs.symlinkSync(path.join(ROOT, "node_modules/ol"), path.join(app, "node_modules/ol"), "dir");
  fs.writeFileSync(path.join(app, "index.html"), INDEX_HTML);
  fs.writeFileSync(path.join(app, "main.js"), MAIN_JS);

  const outDir = path.join(app, "dist");
  const result = await build({
    root: app,
    configFile: false,
    logLevel: "warn",
    build: { target: "es2022", outDir, emptyOutDir: true, reportCompressedSize: false, chunkSizeWarningLimit: 4096 },
  });
  const outputs = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output);
  const names = outputs.map((o) => o.fileName);
  t.diagnostic(`vite output: ${names.join(", ")}`);
  assert.equal(names.filter((n) => n.endsWith(".wasm")).length, 1, "one .wasm asset");
  const js = outputs
    .filter((o) => o.type === "chunk")
    .map((o) => o.code)
    .join("\n");
  assert.ok(!js.includes("node:fs"), "the node entry was not bundled");

  web = await startStaticServer(outDir, { allow: ["/"], index: true });
  const page = await newCheckedPage(browser, { expectedConsoleError: failedLoadFrom(srv.url) });
  try {
    await page.goto(`${web.url}/?${new URLSearchParams({ server: srv.url, run: "vite-ol" })}`);
    const results = await pageResults(page, { timeout: 20_000 });
    await screenshot(page, "browser-vite-ol");
    assert.equal(results.error, undefined, `the page failed: ${results.error}\n${page.problems().join("\n")}`);
    assert.equal(results.directStatus, 200);
    assert.deepEqual(results.errors, []);
    assert.equal(results.loaded, 4, "the 4 tiles of zoom 1 loaded");
    assert.equal(srv.requests("vite-ol"), 8, "each tile: a 503, then the tile");
    assert.deepEqual(page.problems(), [], "no unexpected page errors");
  } finally {
    await page.closeContext();
  }
});
