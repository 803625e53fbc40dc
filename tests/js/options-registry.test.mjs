// The option registry (src/options/registry.rs, printed by examples/option_registry.rs) is the one
// declaration of fetchTile's options; what the package and the docs say about them is written
// from it by scripts/options-from-registry.mjs (scripts/build.sh). These check the built package
// and the docs against the registry, option by option: the types a TypeScript user sees (read by
// the TypeScript compiler from pkg/index.d.ts, as an editor reads it), their `@default`s, the
// names the adapters ask, and docs/reference.md's table.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { readRegistry, defaultTag, referenceWithTable } from "../../scripts/options-from-registry.mjs";
import { FETCH_TILE_OPTIONS } from "../../pkg/gen/options.js";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const registry = readRegistry();

/** FetchTileOptions as the compiler sees it from the package's entry: name → {type, default}. */
function declaredOptions() {
  const entry = path.join(ROOT, "pkg/index.d.ts");
  const program = ts.createProgram([entry], { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext });
  const checker = program.getTypeChecker();
  const diagnostics = ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));
  assert.deepEqual(diagnostics, [], "pkg/index.d.ts compiles");
  const module = checker.getSymbolAtLocation(program.getSourceFile(entry));
  const exported = checker.getExportsOfModule(module).find((s) => s.name === "FetchTileOptions");
  assert.ok(exported, "pkg/index.d.ts exports FetchTileOptions");
  const type = checker.getDeclaredTypeOfSymbol(checker.getAliasedSymbol(exported));
  const options = new Map();
  for (const property of checker.getPropertiesOfType(type)) {
    const declaration = property.valueDeclaration;
    const tag = property.getJsDocTags(checker).find((t) => t.name === "default");
    options.set(property.name, {
      type: declaration.type.getText(),
      optional: (property.flags & ts.SymbolFlags.Optional) !== 0,
      default: tag ? ts.displayPartsToString(tag.text) : undefined,
      doc: ts.displayPartsToString(property.getDocumentationComment(checker)).replace(/\s+/g, " "),
    });
  }
  return options;
}

const declared = declaredOptions();

test("the .d.ts declares every option of the registry, and no other, with its type, default and doc", () => {
  assert.ok(registry.fetchTile.length >= 24, `the registry has ${registry.fetchTile.length} options`);
  assert.deepEqual(
    [...declared.keys()],
    registry.fetchTile.map((o) => o.name),
    "the same names, in the same order",
  );
  for (const option of registry.fetchTile) {
    const seen = declared.get(option.name);
    assert.equal(seen.type, option.type, `${option.name}: type`);
    assert.ok(seen.optional, `${option.name}: optional`);
    assert.equal(seen.default, defaultTag(option), `${option.name}: @default`);
    assert.equal(seen.doc, option.doc, `${option.name}: documentation`);
  }
});

test("the @default tags say the registry's values as JavaScript writes them", () => {
  const expected = {
    preset: '"interactive"',
    baseDelayMs: "100 (batch: 500)",
    retryOn: "[408, 425, 429, 500, 502, 503, 504]",
    subdomains: '["a", "b", "c"]',
    hedge: '"auto" (batch: "off")',
    maxBytes: "33554432 (batch: 67108864)",
  };
  for (const [name, tag] of Object.entries(expected)) assert.equal(declared.get(name).default, tag, name);
  assert.match(declared.get("maxAgeS").default, /^undefined \(off\)$/);
});

test("the names the adapters ask are the registry's", () => {
  assert.deepEqual(
    [...FETCH_TILE_OPTIONS],
    registry.fetchTile.map((o) => o.name),
  );
  assert.ok(Object.isFrozen(FETCH_TILE_OPTIONS));
});

test("docs/reference.md's options table is the registry's", () => {
  const reference = fs.readFileSync(path.join(ROOT, "docs/reference.md"), "utf8");
  assert.equal(reference, referenceWithTable(reference, registry), "run node scripts/options-from-registry.mjs");
  for (const option of registry.fetchTile) assert.ok(reference.includes(`| \`${option.name}\` |`), option.name);
});
