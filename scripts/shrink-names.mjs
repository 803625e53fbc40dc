// Gives the wasm module's imports and exports one-or-two-letter names and rewrites the glue to
// match. wasm-bindgen names each import `__wbg_<name>_<16 hex digits>` and each closure entry
// after its full Rust type (up to 300 characters); those names ship twice (in the .wasm and in
// the glue), and hex digits are what gzip cannot shrink (what renaming saves: ARCHITECTURE.md's
// ledger).
//
//   node scripts/shrink-names.mjs GLUE.js MAPPING.json MODULE.wasm
//
// MAPPING.json is what `wasm-opt --minify-imports-and-exports-and-modules` printed: every import
// moves to one module with a short name, every export gets a short name. The glue is rewritten
// in place; any old name left behind is an error, so a wasm-bindgen upgrade that changes the
// glue's shape fails the build instead of shipping a module that cannot link.
import fs from "node:fs";

const [gluePath, mappingPath, wasmPath] = process.argv.slice(2);
let glue = fs.readFileSync(gluePath, "utf8");
const text = fs.readFileSync(mappingPath, "utf8");
const mapping = JSON.parse(text.slice(text.indexOf("{")));

const fail = (why) => {
  console.error(`shrink-names: ${why}`);
  process.exit(1);
};
const escapeRegExp = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// The glue's own import object (`const import0 = { __proto__: null, name: function … }`) and the
// namespace variable of each snippet module (`import * as import1 from "./snippets/…"`).
const ownModule = /"(\.\/[^"]+_bg\.js)": import0,/.exec(glue)?.[1] ?? fail("no import0 module in the glue");
const namespaces = new Map();
for (const [, name, path] of glue.matchAll(/import \* as (import\d+) from "([^"]+)"/g)) {
  if (!namespaces.has(path)) namespaces.set(path, name);
}

const modules = new Set(mapping.imports.map(([module]) => module));
if (modules.size === 0) fail("the mapping lists no imports");
const wasmImports = WebAssembly.Module.imports(new WebAssembly.Module(fs.readFileSync(wasmPath)));
const targetModule = wasmImports[0]?.module ?? fail("the module imports nothing");
if (wasmImports.some((i) => i.module !== targetModule)) fail("the module's imports are not in one module");
if (!/^[A-Za-z_$][\w$]*$/.test(targetModule)) fail(`module name ${targetModule} is not an identifier`);
const fromSnippets = [];
for (const [module, base, short] of mapping.imports) {
  if (module === ownModule) {
    const key = new RegExp(`\\b${escapeRegExp(base)}: function`, "g");
    const found = glue.match(key)?.length ?? 0;
    if (found !== 1) fail(`import ${base}: ${found} definitions in the glue, expected 1`);
    glue = glue.replace(key, `${short}: function`);
  } else {
    const namespace = namespaces.get(module) ?? fail(`no namespace import of ${module}`);
    fromSnippets.push(`        ${short}: ${namespace}.${base},`);
  }
}
glue = glue.replace(/const import0 = \{\n\s*__proto__: null,\n/, (head) => `${head + fromSnippets.join("\n")}\n`);

// The object handed to WebAssembly.instantiate: one module now.
const returned = /return \{\n\s*__proto__: null,\n(?:\s*"[^"]+": import\d+,\n)+\s*\};/;
if (!returned.test(glue)) fail("the glue's import object has an unexpected shape");
glue = glue.replace(returned, `return { __proto__: null, ${targetModule}: import0 };`);

for (const [name, short] of mapping.exports) {
  glue = glue.replace(new RegExp(`\\bwasm\\.${escapeRegExp(name)}\\b`, "g"), `wasm.${short}`);
}

// Every import the module asks for is in the import object under its short name.
for (const [module, base, short] of mapping.imports) {
  const value = module === ownModule ? "function" : `${namespaces.get(module)}.${base}`;
  if (!new RegExp(`\\n\\s*${escapeRegExp(short)}: ${escapeRegExp(value)}`).test(glue)) fail(`import ${base} (${short}) is not provided`);
}

// Nothing may still use an old name.
for (const [module, base] of mapping.imports) {
  if (module === ownModule && new RegExp(`\\b${escapeRegExp(base)}\\b`).test(glue)) fail(`import ${base} is still named`);
}
const exported = new Set(mapping.exports.map(([name]) => name));
for (const [, used] of glue.matchAll(/\bwasm\.([A-Za-z_$][\w$]*)/g)) {
  if (exported.has(used)) fail(`export ${used} is still used by its old name`);
}
for (const [, used] of glue.matchAll(/\bwasm\.([A-Za-z_$][\w$]*)/g)) {
  if (!mapping.exports.some(([, short]) => short === used)) fail(`the glue uses wasm.${used}, not an export`);
}
fs.writeFileSync(gluePath, glue);
