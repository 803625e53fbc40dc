#!/usr/bin/env node
// How often a call crosses between JS and tilefetch's wasm module: every import the module calls
// (wasm → JS: the glue's functions, fetch, timers, the clock, a JS handle dropped) and every
// export JS calls (JS → wasm), counted by name per call, on healthy tiles from the loopback fault
// server. Unlike time, the count does not depend on the machine's load: it is what a change to
// the boundary adds or removes. The names are wasm-bindgen's, from the mapping that
// scripts/build.sh keeps in target/. Today's module, and in a process of its own the module at
// the "boundary" issue's start (bench/before/, when built: the before and after). Writes
// bench/out/crossings.json.
//
//   node bench/crossings.mjs [--tiles 400]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { BEFORE_ID, BEFORE_LABEL, BEFORE_MAPPING, BEFORE_PKG, beforeIsBuilt } from "./before/id.mjs";
import { OUT, ROOT } from "./bundle.mjs";
import { option } from "./cli.mjs";
import { profileTiles } from "./profile-tiles.mjs";
import { startServerProcess } from "./server-process.mjs";

const tiles = Number(option("tiles", 400));
const concurrency = 16;
// Each build counts in a process of its own (their glues' short names overlap): this process
// starts one per build and merges what they print.
const build = option("build", null);
const BUILDS = {
  before: { pkg: BEFORE_PKG, mapping: BEFORE_MAPPING },
  after: { pkg: path.join(ROOT, "pkg/node.js"), mapping: path.join(ROOT, "target/wasm-names-tilefetch.json") },
};
if (build === null) {
  const result = { tiles, concurrency, clients: {} };
  for (const name of Object.keys(BUILDS)) {
    if (name === "before" ? !beforeIsBuilt() : !fs.existsSync(BUILDS[name].mapping)) {
      process.stderr.write(`crossings: the ${name} build is not there; left out\n`);
      continue;
    }
    const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), "--build", name, "--tiles", String(tiles)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    Object.assign(result.clients, JSON.parse(out).clients);
  }
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(path.join(OUT, "crossings.json"), `${JSON.stringify(result, null, 2)}\n`);
  process.exit(0);
}
// wasm-opt prints the mapping after any line of its own (as scripts/shrink-names.mjs reads it).
const mappingText = fs.readFileSync(BUILDS[build].mapping, "utf8");
const mapping = JSON.parse(mappingText.slice(mappingText.indexOf("{")));
// wasm-bindgen's names end in a hash of the signature; the name before it is what the glue calls.
const plain = (name) => name.replace(/^__wbg_/, "").replace(/_[0-9a-f]{16}$/, "");
const importName = new Map(mapping.imports.map(([, name, short]) => [short, plain(name)]));
const exportName = new Map(mapping.exports.map(([name, short]) => [short, plain(name)]));

const counts = new Map();
const count = (name) => counts.set(name, (counts.get(name) ?? 0) + 1);
const counted = (f, name) =>
  function (...args) {
    count(name);
    return f.apply(this, args);
  };

/** Whether `imports` are tilefetch's (its glue's names), not another module's (undici's parser). */
const isOurs = (imports) => Object.values(imports ?? {}).some((mod) => Object.keys(mod).some((key) => importName.has(key)));
const wrapImports = (imports) => {
  if (!isOurs(imports)) return imports;
  return Object.fromEntries(
    Object.entries(imports).map(([module, fns]) => [
      module,
      Object.fromEntries(Object.entries(fns).map(([key, f]) => [key, typeof f === "function" ? counted(f, `wasm → JS: ${importName.get(key) ?? key}`) : f])),
    ]),
  );
};
const wrapInstance = (instance, ours) => {
  if (!ours) return instance;
  const exports = Object.fromEntries(
    Object.entries(instance.exports).map(([key, f]) => [key, typeof f === "function" ? counted(f, `JS → wasm: ${exportName.get(key) ?? key}`) : f]),
  );
  return new Proxy(instance, { get: (target, key) => (key === "exports" ? exports : target[key]) });
};
// pkg/node.js instantiates synchronously (initSync).
const Instance = WebAssembly.Instance;
WebAssembly.Instance = class {
  // A constructor may return another object: the instance, its exports counted.
  constructor(module, imports) {
    // biome-ignore lint/correctness/noConstructorReturn: the counted instance stands in for the real one
    return wrapInstance(new Instance(module, wrapImports(imports)), isOurs(imports));
  }
};

const tilefetch = await import(pathToFileURL(BUILDS[build].pkg).href);
const server = await startServerProcess();
const result = { tiles, concurrency, clients: {} };
try {
  const fetchTile = {
    label: build === "before" ? BEFORE_LABEL : "fetchTile (default client)",
    get: (url, signal) => tilefetch.fetchTile(url, { signal }),
    stats: () => tilefetch.stats(),
  };
  const clients = build === "before" ? { [BEFORE_ID]: fetchTile } : { "tilefetch-fetchtile": fetchTile, "tilefetch-client32": client32() };
  let row = 30000;
  for (const [id, client] of Object.entries(clients)) {
    const run = async (n) => {
      const urls = profileTiles(server.url, n, row);
      row += Math.ceil(n / 40) + 1;
      let next = 0;
      const worker = async () => {
        while (next < urls.length) await client.get(urls[next++], new AbortController().signal);
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    };
    await run(200); // warm-up: the host's latency samples, connections
    const hedgesBefore = hedgesOf(client.stats());
    counts.clear();
    await run(tiles);
    const perCall = Object.fromEntries([...counts].sort((a, b) => b[1] - a[1]).map(([name, n]) => [name, n / tiles]));
    const hedgesAfter = hedgesOf(client.stats());
    // A build without hedging (the one at the boundary issue's start) has no such count: null.
    const hedgesPerCall = hedgesAfter === null || hedgesBefore === null ? null : (hedgesAfter - hedgesBefore) / tiles;
    result.clients[id] = { label: client.label, perCall, hedgesPerCall };
    client.close?.();
    const total = Object.values(perCall).reduce((a, b) => a + b, 0);
    process.stderr.write(`crossings, ${id}: ${total.toFixed(1)} per call\n`);
  }
} finally {
  await server.stop();
}
process.stdout.write(JSON.stringify(result));
process.exit(0);

/** Today's TileClient at 32 per host, as bench/clients/tilefetch-client32.mjs makes it. */
function client32() {
  const client = new tilefetch.TileClient({ maxConcurrent: 32 });
  return {
    label: "new TileClient({ maxConcurrent: 32 })",
    get: (url, signal) => client.fetchTile(url, { signal }),
    stats: () => client.stats(),
    close: () => client.free(),
  };
}

/** Hedges sent, summed over the hosts of a `stats()` result; null when no host counts hedges. */
function hedgesOf(stats) {
  const hosts = Object.values(stats?.hosts ?? stats ?? {}).filter((host) => typeof host?.hedges === "number");
  return hosts.length ? hosts.reduce((sum, host) => sum + host.hedges, 0) : null;
}
