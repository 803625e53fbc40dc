// The option registry (src/options/registry.rs, printed by examples/option_registry.rs) is the one
// declaration of fetchTile's options, a TileClient's settings and the edge gate's setting names;
// what the package and the docs say about them is written from it by
// scripts/options-from-registry.mjs (scripts/build.sh). These check the built package and the docs
// against the registry, field by field: the types a TypeScript user sees (read by the TypeScript
// compiler from pkg/index.d.ts, as an editor reads it) with their `@default`s and docs, the names
// the adapters and the edge gate ask, and the docs' tables.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { readRegistry, defaultTag, docTables, withTable } from "../../scripts/options-from-registry.mjs";
import { FETCH_TILE_OPTIONS, GATE_KEYS } from "../../pkg/gen/options.js";
import { diagnostics, fieldsOf } from "./dts.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const registry = readRegistry();

/** Each declaration is a field of `fields` with its type, `@default` and doc. */
function assertDeclared(fields, declarations, where) {
  for (const declaration of declarations) {
    const seen = fields.get(declaration.name);
    assert.ok(seen, `${where}: ${declaration.name} is declared`);
    assert.equal(seen.type, declaration.type, `${where}.${declaration.name}: type`);
    assert.ok(seen.optional, `${where}.${declaration.name}: optional`);
    assert.equal(seen.default, defaultTag(declaration), `${where}.${declaration.name}: @default`);
    assert.equal(seen.doc, declaration.doc, `${where}.${declaration.name}: documentation`);
  }
}

test("pkg/index.d.ts compiles", () => {
  assert.deepEqual(diagnostics(), []);
});

test("FetchTileOptions: every option of the registry, and no other, with its type, default and doc", () => {
  const fields = fieldsOf("FetchTileOptions");
  assert.ok(registry.fetchTile.length >= 24, `the registry has ${registry.fetchTile.length} options`);
  assert.deepEqual(
    [...fields.keys()],
    registry.fetchTile.map((o) => o.name),
    "the same names, in the same order",
  );
  assertDeclared(fields, registry.fetchTile, "FetchTileOptions");
});

test("HostSettings, HostOptions and TileClientConfig: the registry's settings, and the options each scope allows", () => {
  const host = fieldsOf("HostSettings");
  assert.deepEqual(
    [...host.keys()],
    registry.hostSettings.map((s) => s.name),
  );
  assertDeclared(host, registry.hostSettings, "HostSettings");
  const names = (scopes) => registry.fetchTile.filter((o) => scopes.includes(o.scope)).map((o) => o.name);
  const perHost = fieldsOf("HostOptions");
  assert.deepEqual([...perHost.keys()].sort(), [...names(["host"]), ...host.keys()].sort(), "HostOptions");
  const client = fieldsOf("TileClientConfig");
  const clientNames = [...names(["host", "client"]), ...host.keys(), ...registry.clientSettings.map((s) => s.name)];
  assert.deepEqual([...client.keys()].sort(), clientNames.sort(), "TileClientConfig");
  assertDeclared(client, registry.clientSettings, "TileClientConfig");
  assert.deepEqual(names(["call"]), ["signal", "onRetry", "range"], "per call only");
});

test("the @default tags say the registry's values as JavaScript writes them", () => {
  const fields = fieldsOf("FetchTileOptions");
  const expected = {
    preset: '"interactive"',
    baseDelayMs: "100 (batch: 500)",
    retryOn: "[408, 425, 429, 500, 502, 503, 504]",
    subdomains: '["a", "b", "c"]',
    hedge: '"auto" (batch: "off")',
    maxBytes: "33554432 (batch: 67108864)",
    maxAgeS: "undefined (off)",
  };
  for (const [name, tag] of Object.entries(expected)) assert.equal(fields.get(name).default, tag, name);
  const host = fieldsOf("HostSettings");
  assert.equal(host.get("breaker.openMs").default, "500 (batch: 2000)");
  assert.equal(host.get("learnRate").default, "true");
});

test("the names the adapters and the edge gate ask are the registry's", async () => {
  assert.deepEqual(
    [...FETCH_TILE_OPTIONS],
    registry.fetchTile.map((o) => o.name),
  );
  assert.ok(Object.isFrozen(FETCH_TILE_OPTIONS));
  assert.deepEqual([...GATE_KEYS], registry.gateKeys);
  // What the worker sends its gate: every key the core reads, and only those.
  const { gateSettings } = await import("../../pkg/worker/gate.js");
  assert.deepEqual(
    Object.keys(gateSettings({ failureThreshold: 3, openMs: 10, maxOpenMs: 20, burst: 1, ratePerSecond: null, binding: "X" }, 1000)),
    registry.gateKeys,
  );
});

test("the docs' tables are the registry's", () => {
  for (const [page, table] of Object.entries(docTables(registry))) {
    const text = fs.readFileSync(path.join(ROOT, page), "utf8");
    assert.equal(text, withTable(text, table, page), `${page}: run node scripts/options-from-registry.mjs`);
  }
  const reference = fs.readFileSync(path.join(ROOT, "docs/reference.md"), "utf8");
  for (const option of registry.fetchTile) assert.ok(reference.includes(`| \`${option.name}\` |`), option.name);
});
