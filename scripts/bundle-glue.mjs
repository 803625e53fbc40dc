// Folds wasm-bindgen's glue and the crate's JS snippets (src/web/*.js) into one minified module,
// in place of the glue: one file instead of five, names mangled across them, and the snippets'
// exports that only the glue used gone. Users download it, so it ships small. rolldown is the
// bundler the repo already has for Vite.
//   node scripts/bundle-glue.mjs pkg/gen/tilefetch.js   (or pkg/gen/tilefetch_edge.js)
import fs from "node:fs";
import path from "node:path";
import { rolldown } from "rolldown";

const [glue] = process.argv.slice(2);
// The bundle also exports the TileError class itself (from the wire.js snippet), so that
// pkg/browser.js can export it before the wasm module has loaded.
const snippets = path.join(path.dirname(glue), "snippets");
// The lazy loading's calls made before the module is ready send their first request through the
// transport and request snippets (sendEarly, resolveUrls, buildRequest): the same modules the
// glue imports.
const snippetFiles = fs.readdirSync(snippets, { recursive: true }).map((f) => path.join(snippets, String(f)));
const snippet = (name) => {
  const file = snippetFiles.find((f) => f.endsWith(path.join("src", "web", name)));
  if (!file) {
    console.error(`bundle-glue: no ${name} snippet under ${snippets}`);
    process.exit(1);
  }
  return file;
};
const objects = snippet("wire.js");
const input = path.join(path.dirname(glue), "bundle-entry.js");
const relative = (f) => `./${path.relative(path.dirname(input), f).split(path.sep).join("/")}`;
const glueSpec = JSON.stringify(relative(glue));
const objectsSpec = JSON.stringify(relative(objects));
const transportSpec = JSON.stringify(relative(snippet("transport.js")));
const requestSpec = JSON.stringify(relative(snippet("request.js")));
// The browser entry's lazy loading (src/web/lazy.js) over this bundle's own exports, minified with
// them; pkg/browser.js starts it. The other entries import the same bundle and never start it.
const lazySpec = JSON.stringify(relative(path.join(path.dirname(glue), "..", "..", "src", "web", "lazy.js")));
fs.writeFileSync(
  input,
  [
    `export * from ${glueSpec};`,
    `export { default } from ${glueSpec};`,
    `export { TileError } from ${objectsSpec};`,
    `import init, { fetchTileCalledAt, stats, TileClient } from ${glueSpec};`,
    `import { TileError } from ${objectsSpec};`,
    `import { sendEarly } from ${transportSpec};`,
    `import { buildRequest, resolveUrls } from ${requestSpec};`,
    `import { lazyApi } from ${lazySpec};`,
    "const lazy = lazyApi({ init, fetchTileCalledAt, stats, TileClient, TileError, resolveUrls, buildRequest, sendEarly });",
    "export const startLoading = lazy.startLoading;",
    "export const lazyFetchTile = lazy.fetchTile;",
    "export const lazyStats = lazy.stats;",
    "export const LazyTileClient = lazy.TileClient;",
    "",
  ].join("\n"),
);
const bundle = await rolldown({ input, treeshake: true, logLevel: "warn" });
// Classes keep their names (`TileError.name`, and what consoles show for an instance);
// functions' names are not worth the bytes.
const keepNames = { class: true, function: false };
// KEEP_NAMES=1 (scripts/build.sh, for a profile): not minified, so a profile names the glue's
// functions too.
const minify = process.env.KEEP_NAMES ? false : { mangle: { keepNames }, compress: { keepNames } };
const { output } = await bundle.generate({ format: "es", minify, comments: false });
await bundle.close();
const chunks = output.filter((o) => o.type === "chunk");
if (chunks.length !== 1 || output.length !== 1) {
  console.error(`bundle-glue: expected one module, got ${output.map((o) => o.fileName).join(", ")}`);
  process.exit(1);
}
// Every name a package file imports from this glue must survive the bundling. Each file loads
// one of the two builds (scripts/build.sh): browser.js and node.js tilefetch.js; workerd.js and
// the edge proxy's worker/*.js tilefetch_edge.js.
const pkgDir = path.join(path.dirname(glue), "..");
const importers = ["browser.js", "node.js", "workerd.js", ...fs.readdirSync(path.join(pkgDir, "worker")).map((f) => `worker/${f}`)];
const clauseOf = new RegExp(`^import\\s+([^;"']*?)\\s+from\\s+["'](?:\\.\\.?/)gen/${path.basename(glue).replace(/[.]/g, "\\.")}["']`, "m");
const wanted = new Set();
let entries = 0;
for (const file of importers.filter((f) => f.endsWith(".js"))) {
  const clause = fs.readFileSync(path.join(pkgDir, file), "utf8").match(clauseOf);
  if (!clause) continue;
  if (!file.startsWith("worker/")) entries += 1;
  const [, imported] = clause;
  if (/^[\w$]/.test(imported)) wanted.add("default");
  for (const name of imported.match(/\{([^}]*)\}/)?.[1].split(",") ?? []) {
    if (name.trim()) wanted.add(name.trim().split(/\s+as\s+/)[0]);
  }
}
if (entries === 0) {
  console.error(`bundle-glue: no package entry (browser.js, node.js, workerd.js) imports gen/${path.basename(glue)}`);
  process.exit(1);
}
const missing = [...wanted].filter((name) => !chunks[0].exports.includes(name));
if (wanted.size < 5 || missing.length > 0) {
  console.error(`bundle-glue: the entries import ${[...wanted].join(", ")}; the bundle lacks ${missing.join(", ")}`);
  process.exit(1);
}
fs.writeFileSync(glue, chunks[0].code);
fs.rmSync(snippets, { recursive: true, force: true });
fs.rmSync(input);
