#!/usr/bin/env node
// What a call costs the CPU with the network taken out: the global `fetch` is replaced by a stub
// that answers every request at once with the same healthy PNG tile (a fresh Response each time),
// and raw fetch, the plain JS wrapper, the wasm floor and tilefetch take turns in rounds
// (bench/overhead-rounds.mjs), as in the overhead bench. Without sockets and undici between the
// calls, the figures move less with the machine's load (still ±15 µs between runs at 32 calls at
// a time, where the default client queues half of them): tilefetch's over the wrapper is its own
// work per call (the wasm module, its glue, its timers and crossings), the floor's is the least a
// fetch awaited in wasm costs; tilefetch at the boundary issue's start (bench/before/) runs beside
// today's when built. Writes bench/out/own-work.json.
//
//   node bench/own-work.mjs [--tiles 4000] [--rounds 7] [--beside DIR]
//
// --beside DIR: another build of the package (a copy of pkg/ made at another commit) whose
// fetchTile runs in the same rounds as "tilefetch-fetchtile-beside", for a before/after of a
// change; it is left out of the file the report reads (bench/out/own-work-beside.json instead).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { CLIENTS } from "./clients/index.mjs";
import { BEFORE_ID, beforeIsBuilt } from "./before/id.mjs";
import { OUT } from "./bundle.mjs";
import { option } from "./cli.mjs";
import * as floor from "./floor/client.mjs";
import { FLOOR_ID, floorIsBuilt } from "./floor/id.mjs";
import { runRounds, summarise } from "./overhead-rounds.mjs";
import { tilePng } from "../tests/server/fault-server.mjs";

const tiles = Number(option("tiles", 4000));
const beside = option("beside", null);
const rounds = Number(option("rounds", 7));
const warmup = 2;
// The overhead bench's concurrency, so that the two compare call for call (the default client
// queues half of them at its 16 per host in both).
const concurrency = 32;
// And tilefetch at the boundary issue's start (bench/before/build.sh), when built.
const hasBefore = beforeIsBuilt();
const IDS = [
  "raw-fetch",
  "plain-wrapper",
  ...(floorIsBuilt() ? [FLOOR_ID] : []),
  ...(hasBefore ? [BEFORE_ID] : []),
  "tilefetch-fetchtile",
  "tilefetch-client32",
];

const body = new Uint8Array(tilePng(15, 16000, 10000));
const headers = { "content-type": "image/png", "content-length": String(body.length), date: new Date().toUTCString() };
globalThis.fetch = async (_input, init) => {
  init?.signal?.throwIfAborted();
  return new Response(body, { headers });
};

const tilefetch = await import("../pkg/node.js");
const modules = { ...CLIENTS, [FLOOR_ID]: floor, ...(hasBefore ? { [BEFORE_ID]: await import("./before/client.mjs") } : {}) };
const clients = Object.fromEntries(IDS.map((id) => [id, modules[id].create({ tilefetch })]));
if (beside !== null) {
  const other = await import(pathToFileURL(path.resolve(beside, "node.js")).href);
  clients["tilefetch-fetchtile-beside"] = CLIENTS["tilefetch-fetchtile"].create({ tilefetch: other });
}
// No server: the stub answers for any URL. Distinct URLs, as the other benches fetch.
const urls = Array.from({ length: tiles }, (_, i) => `http://127.0.0.1:9/tile/15/${16000 + (i % 40)}/${10000 + Math.floor(i / 40)}.png`);
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const samples = await runRounds({ clients, urls, concurrency, rounds, warmup, cpu });
for (const c of Object.values(clients)) c.close?.();
const summary = summarise(samples, { tiles });
fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(
  path.join(OUT, beside === null ? "own-work.json" : "own-work-beside.json"),
  `${JSON.stringify({ tiles, rounds, warmup, concurrency, node: process.version, samples, summary }, null, 2)}\n`,
);
for (const [id, s] of Object.entries(summary))
  process.stderr.write(
    `own work, ${id}: ${s.cpuUsPerCall.toFixed(1)} µs CPU per call, ${(s.extraCpuOverReferenceUsPerCall ?? 0).toFixed(1)} over the wrapper\n`,
  );
process.exit(0);
