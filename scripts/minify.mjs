// Minifies the generated JS glue in place (oxc's minifier, through rolldown, which the repo
// already has for Vite). wasm-bindgen emits readable glue; users download it, so it ships small.
//   node scripts/minify.mjs FILE...
import fs from "node:fs";
import { minifySync } from "rolldown/utils";

for (const file of process.argv.slice(2)) {
  const source = fs.readFileSync(file, "utf8");
  const result = minifySync(file, source, { module: true, compress: true, mangle: true });
  if (result.errors?.length) {
    console.error(`minify ${file}:`, result.errors);
    process.exit(1);
  }
  fs.writeFileSync(file, result.code);
}
