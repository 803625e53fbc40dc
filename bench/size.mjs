#!/usr/bin/env node
// Size of what a user downloads, gzip -9: tilefetch's wasm and JS glue (as scripts/build.sh
// counts them), each adapter as shipped and minified, and each anchor as the adapter uses it,
// bundled and minified by rolldown. Writes bench/out/size.json.
//
//   node bench/size.mjs
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { bundle, bundleAnchor, anchorClients, installedVersion, ROOT, OUT } from "./bundle.mjs";
import { CLIENTS } from "./clients/index.mjs";

/** gzip -9 of the concatenated buffers, in bytes (the real gzip, as scripts/build.sh uses). */
export const gzipBytes = (buffers) => execFileSync("gzip", ["-9", "-c"], { input: Buffer.concat(buffers), maxBuffer: 64 << 20 }).length;

const read = (rel) => fs.readFileSync(path.join(ROOT, rel));
const sum = (xs) => xs.reduce((a, b) => a + b, 0);

// As scripts/build.sh: the glue (wasm-bindgen's JS with the crate's snippets folded in) and the entry.
const glueFiles = ["pkg/gen/tilefetch.js", "pkg/browser.js"];
const wasm = read("pkg/gen/tilefetch_bg.wasm");
const core = {
  wasmRaw: wasm.length,
  wasmGzip: gzipBytes([wasm]),
  glueFiles,
  glueRaw: sum(glueFiles.map((f) => read(f).length)),
  glueGzip: gzipBytes(glueFiles.map(read)),
};
core.totalGzip = core.wasmGzip + core.glueGzip;

// Adapters: what `tilefetch/<name>` adds on top of the core (the core and map libraries are
// external: the user has them anyway).
const EXTERNAL = [/\/browser\.js$/, /\/workerd\.js$/, /^ol(\/|$)/, /^leaflet$/, /^maplibre-gl$/];
const ADAPTERS = {
  openlayers: ["pkg/openlayers.js", "pkg/adapter-options.js", "pkg/without-cors.js", "pkg/decode.js"],
  leaflet: ["pkg/leaflet.js", "pkg/adapter-options.js", "pkg/without-cors.js", "pkg/decode.js"],
  maplibre: ["pkg/maplibre.js", "pkg/adapter-options.js"],
  cesium: ["pkg/cesium.js", "pkg/adapter-options.js"],
  deckgl: ["pkg/deckgl.js", "pkg/adapter-options.js"],
  worker: [
    "pkg/worker.js",
    ...fs
      .readdirSync(path.join(ROOT, "pkg/worker"))
      .filter((f) => f.endsWith(".js"))
      .sort()
      .map((f) => `pkg/worker/${f}`),
  ],
};
const adapters = {};
for (const [name, files] of Object.entries(ADAPTERS)) {
  const minified = await bundle(path.join(ROOT, files[0]), path.join(OUT, "adapters", `${name}.min.js`), { external: EXTERNAL });
  adapters[name] = {
    files,
    raw: sum(files.map((f) => read(f).length)),
    gzip: gzipBytes(files.map(read)),
    minified: minified.length,
    minifiedGzip: gzipBytes([minified]),
  };
}

const anchors = {};
for (const id of anchorClients()) {
  const { anchor } = CLIENTS[id];
  const minified = await bundleAnchor(id);
  anchors[anchor] = { version: installedVersion(anchor), client: id, minified: minified.length, minifiedGzip: gzipBytes([minified]) };
}

const result = { core, adapters, anchors };
fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(path.join(OUT, "size.json"), JSON.stringify(result, null, 1));
process.stderr.write(`size: ${JSON.stringify(result)}\n`);
