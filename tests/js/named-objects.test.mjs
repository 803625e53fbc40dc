// Objects the wasm module builds field by field (src/web/wire.rs `Named`: a host's stats, a
// TileError's optional fields) carry names that only the Rust side writes. These hold the objects
// a real client hands out against the types pkg/index.d.ts promises, as the TypeScript compiler
// reads them: every field promised is there with a value of its type, and no other.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { TileClient, TileError } from "../../pkg/node.js";
import { startFaultServer } from "../server/fault-server.mjs";
import { fieldsOf } from "./dts.mjs";
import { FAST, tileUrl, rejection } from "./helpers.mjs";

let srv;
before(async () => {
  srv = await startFaultServer({ seed: 7 });
});
after(async () => {
  await srv?.close();
});

/** `object`'s fields, dotted into the objects the declaration `declared` has dotted names for. */
function flatten(object, declared, prefix = "") {
  const out = new Map();
  for (const [key, value] of Object.entries(object)) {
    const name = `${prefix}${key}`;
    const nested = [...declared.keys()].some((d) => d.startsWith(`${name}.`));
    if (nested) for (const [k, v] of flatten(value, declared, `${name}.`)) out.set(k, v);
    else out.set(name, value);
  }
  return out;
}

function assertShape(object, declared, what) {
  const seen = flatten(object, declared);
  assert.deepEqual([...seen.keys()].sort(), [...declared.keys()].filter((k) => seen.has(k) || !declared.get(k).optional).sort(), `${what}: the fields`);
  for (const [name, value] of seen) {
    const field = declared.get(name);
    assert.ok(field, `${what}.${name} is not declared`);
    assert.ok(field.accepts(value), `${what}.${name} = ${JSON.stringify(value)} is no ${field.type}`);
  }
}

test("a host's stats are the HostStats the .d.ts declares, field by field", async () => {
  const client = new TileClient();
  await client.fetchTile(tileUrl(srv, "named-stats", [1, 0, 0]), FAST);
  await assert.rejects(client.fetchTile(tileUrl(srv, "named-stats", [1, 0, 1], { f: 404 }), FAST), TileError);
  const [host] = Object.values(client.stats());
  const declared = fieldsOf("HostStats");
  assert.ok(declared.has("breaker.state") && declared.has("latencyMs.p95"), "the declaration is read with its nested objects");
  assertShape(host, declared, "HostStats");
  assert.deepEqual(host.giveUps, { http: 1 });
  assert.equal(host.requests, 2);
  assert.equal(typeof host.latencyMs.p50, "number");
  client.free();
});

test("a TileError has the fields the .d.ts declares, the optional ones when they apply", async () => {
  const declared = fieldsOf("TileError", { inherited: false });
  const cases = [
    [{ f: 404 }, { status: 404 }],
    [
      { f: 429, ra: 3 },
      { status: 429, retryAfterMs: 3000 },
    ],
    [{ f: "sexml", code: "LayerNotDefined" }, { exceptionCode: "LayerNotDefined" }],
  ];
  for (const [i, [params, expected]] of cases.entries()) {
    // A client each: the 429 pauses its host.
    const client = new TileClient();
    const error = await rejection(() => client.fetchTile(tileUrl(srv, "named-error", [2, 0, i], params), { ...FAST, deadlineMs: 300 }), TileError);
    const own = Object.fromEntries(Object.entries(error));
    assertShape(own, declared, `TileError (${JSON.stringify(params)})`);
    for (const [k, v] of Object.entries(expected)) assert.equal(error[k], v, k);
    for (const optional of ["retryAfterMs", "exceptionCode"]) {
      if (!(optional in expected)) assert.equal(optional in error, false, `${optional} is absent`);
    }
    client.free();
  }
});
