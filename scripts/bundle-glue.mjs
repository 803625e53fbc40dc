// Folds wasm-bindgen's glue and the crate's JS snippets (src/web/*.js) into one minified module,
// in place of the glue: one file instead of five, names mangled across them, and the snippets'
// exports that only the glue used gone. Users download it, so it ships small. rolldown is the
// bundler the repo already has for Vite.
//   node scripts/bundle-glue.mjs pkg/gen/tilefetch.js
import fs from "node:fs";
import path from "node:path";
import { rolldown } from "rolldown";

const [glue] = process.argv.slice(2);
const bundle = await rolldown({ input: glue, treeshake: true, logLevel: "warn" });
// Classes keep their names (`TileError.name`, and what consoles show for an instance);
// functions' names are not worth the bytes.
const keepNames = { class: true, function: false };
const minify = { mangle: { keepNames }, compress: { keepNames } };
const { output } = await bundle.generate({ format: "es", minify, comments: false });
await bundle.close();
const chunks = output.filter((o) => o.type === "chunk");
if (chunks.length !== 1 || output.length !== 1) {
  console.error(`bundle-glue: expected one module, got ${output.map((o) => o.fileName).join(", ")}`);
  process.exit(1);
}
// The entry's exports are the glue's: every one must survive (the entries import them by name).
const source = fs.readFileSync(glue, "utf8");
const before = [
  ...[...source.matchAll(/export\s*(?:class|function|const|let)\s+([\w$]+)/g)].map((m) => m[1]),
  ...[...source.matchAll(/export\s*\{([^}]*)\}/g)].flatMap((m) => m[1].split(",").map((s) => s.trim().split(/\s+as\s+/).pop())),
];
const missing = before.filter((name) => !chunks[0].exports.includes(name));
if (missing.length > 0) {
  console.error(`bundle-glue: exports lost: ${missing.join(", ")}`);
  process.exit(1);
}
if (before.length < 6) {
  console.error(`bundle-glue: found only ${before.length} exports in the glue (${before.join(", ")}): has its form changed?`);
  process.exit(1);
}
fs.writeFileSync(glue, chunks[0].code);
fs.rmSync(path.join(path.dirname(glue), "snippets"), { recursive: true, force: true });
