// PMTiles in workerd, from the packed tarball: the Worker of docs/edge-proxy.md ("PMTiles
// archives"), as it stands there, bundled as wrangler bundles a Worker (esbuild with the
// `workerd` condition, the .wasm a CompiledWasm module) with the tarball installed and the real
// `pmtiles` package beside it, run in Miniflare against the loopback static-storage server
// (tests/pmtiles/archive-server.mjs): every tile of an archive under 20 % 503s, 5 % resets and 5 %
// cut bodies, byte-identical; then every tile again from the Cache API.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { build } from "esbuild";
import { Miniflare } from "miniflare";
import { installPacked } from "../packed.mjs";
import { startArchiveServer } from "../pmtiles/archive-server.mjs";
import { allTiles, makeArchive, referenceTiles } from "../pmtiles/archives.mjs";
import { ROOT } from "./modules.mjs";

const FAULTS = "p503=0.2&preset=0.05&pcut=0.05";
let server;
let tmp;
let mf;
let reference;

/** The recipe's code block, the one after its marker in docs/edge-proxy.md. */
function recipe() {
  const doc = fs.readFileSync(path.join(ROOT, "docs/edge-proxy.md"), "utf8");
  const block = /<!-- recipe: pmtiles-worker -->\s*```js\n([\s\S]*?)```/.exec(doc);
  assert.ok(block, "docs/edge-proxy.md has the PMTiles recipe");
  return block[1];
}

before(async () => {
  const archive = makeArchive({ maxzoom: 4 });
  reference = await referenceTiles(archive, 4);
  server = await startArchiveServer({ "world.pmtiles": archive });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-pmtiles-worker-"));
  const { project } = await installPacked(tmp, "pmtiles-worker");
  // What `npm install pmtiles` adds: the package and its one dependency.
  for (const name of ["pmtiles", "fflate"]) fs.cpSync(path.join(ROOT, "node_modules", name), path.join(project, "node_modules", name), { recursive: true });
  const code = recipe().replace("https://bucket.example.com/world.pmtiles", `${server.url}/world.pmtiles?run=edge&${FAULTS}`);
  assert.notEqual(code, recipe(), "the recipe names the archive where the test expects it");
  fs.writeFileSync(path.join(project, "worker.js"), code);
  const dist = path.join(project, "dist");
  await build({
    entryPoints: [path.join(project, "worker.js")],
    bundle: true,
    format: "esm",
    platform: "neutral",
    conditions: ["workerd", "worker", "browser"],
    mainFields: ["module", "main"],
    external: ["*.wasm"],
    outfile: path.join(dist, "worker.js"),
    logLevel: "warning",
  });
  fs.mkdirSync(path.join(dist, "gen"));
  fs.copyFileSync(path.join(project, "node_modules/tilefetch/gen/tilefetch_edge_bg.wasm"), path.join(dist, "gen/tilefetch_edge_bg.wasm"));
  mf = new Miniflare({
    compatibilityDate: "2026-04-01",
    modulesRoot: dist,
    modules: [
      { type: "ESModule", path: path.join(dist, "worker.js") },
      { type: "CompiledWasm", path: path.join(dist, "gen/tilefetch_edge_bg.wasm") },
    ],
  });
  await mf.ready;
});
after(async () => {
  await mf?.dispose();
  await server?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** Every tile through the Worker, `width` at a time: "z/x/y" -> {status, type, bytes}. */
async function everyTile(width = 16) {
  const tiles = allTiles(4);
  const out = new Map();
  for (let i = 0; i < tiles.length; i += width) {
    await Promise.all(
      tiles.slice(i, i + width).map(async ([z, x, y]) => {
        const res = await mf.dispatchFetch(`http://tiles.test/${z}/${x}/${y}`);
        out.set(`${z}/${x}/${y}`, { status: res.status, type: res.headers.get("content-type"), bytes: Buffer.from(await res.arrayBuffer()) });
      }),
    );
  }
  return out;
}

test("the recipe in workerd: every tile of the archive under faults, byte-identical; then from the cache", { timeout: 180_000 }, async (t) => {
  const first = await everyTile();
  const wrong = [...first].filter(([key, r]) => r.status !== 200 || r.type !== "image/png" || !r.bytes.equals(reference.get(key)));
  assert.deepEqual(
    wrong.map(([key, r]) => `${key}: ${r.status} ${r.bytes.toString().slice(0, 80)}`),
    [],
  );
  const requests = server.requests("edge");
  const faults = server.log.filter((e) => e.run === "edge" && e.fault !== "none").length;
  assert.ok(faults > 30, `${faults} faults injected`);
  t.diagnostic(`${first.size} tiles, ${requests} archive requests, ${faults} faults`);
  const again = await everyTile();
  assert.ok([...again].every(([key, r]) => r.status === 200 && r.bytes.equals(reference.get(key))));
  assert.equal(server.requests("edge"), requests, "the second round came from the Cache API");
  const bad = await mf.dispatchFetch("http://tiles.test/not/a/tile");
  assert.equal(bad.status, 404);
  await bad.arrayBuffer();
});
