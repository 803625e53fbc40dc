#!/usr/bin/env node
// Where the time of a call goes, on real sockets: raw fetch and tilefetch's fetchTile each fetch
// the same healthy tiles from the loopback fault server (its own process) under V8's sampling
// profiler (bench/profile-run.mjs, a process per client and round); the samples' self time is
// split by where the code lives: the wasm module, its JS glue, undici (Node's fetch), the
// AbortController/AbortSignal code, timers, the microtask/promise machinery, GC, and the rest.
// Per call, medians over rounds. Writes bench/out/profile.json.
//
//   node bench/profile.mjs [--tiles 4000] [--rounds 3]
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { startServerProcess } from "./server-process.mjs";
import { HERE, OUT } from "./bundle.mjs";
import { median } from "./stats.mjs";
import { option } from "./cli.mjs";

const opt = (name, fallback) => Number(option(name, fallback));
const tiles = opt("tiles", 4000);
const rounds = opt("rounds", 3);
const CLIENT_IDS = ["raw-fetch", "tilefetch-fetchtile"];

/** Where a profile node's code lives. The first match wins. */
export const CATEGORIES = [
  ["wasm (tilefetch's module)", (f) => f.url.startsWith("wasm://")],
  ["glue (pkg/, gen/tilefetch.js)", (f) => /\/pkg\/(gen\/)?[\w-]+\.js$/.test(f.url)],
  ["fetch (undici)", (f) => /undici|internal\/deps\/undici|internal\/fetch/.test(f.url)],
  ["AbortController / AbortSignal", (f) => /abort_controller|internal\/event_target/.test(f.url)],
  ["timers", (f) => /internal\/timers|^timers$|node:timers/.test(f.url) || /^(setTimeout|clearTimeout)$/.test(f.functionName)],
  [
    "promises and microtasks",
    (f) => /task_queues|internal\/process\/promises/.test(f.url) || /^(runMicrotasks|processTicksAndRejections)$/.test(f.functionName),
  ],
  ["streams and buffers", (f) => /internal\/(webstreams|streams|buffer)|^buffer$/.test(f.url)],
  ["sockets and HTTP parser", (f) => /internal\/(net|http|stream_base_commons|js_stream)|^net$|_http_/.test(f.url) || f.functionName === "onStreamRead"],
  ["GC", (f) => f.functionName === "(garbage collector)"],
  ["native and runtime ((program))", (f) => f.functionName === "(program)"],
  ["bench harness", (f) => /\/bench\//.test(f.url)],
  ["other JS", () => true],
];

/**
 * Self time (µs) per category of one profile (idle time left out). A native frame (no URL:
 * `writeLatin1String`, a builtin) counts where the JS that called it does, and a wasm frame of
 * one of `fetchWasm` (undici's llhttp parser, the wasm a raw-fetch run loads) counts as fetch.
 */
export function selfTimeByCategory(profile, fetchWasm = new Set()) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map();
  const categoryOf = (node) => {
    if (memo.has(node.id)) return memo.get(node.id);
    const f = node.callFrame;
    let name;
    if (fetchWasm.has(f.url)) name = "fetch (undici)";
    else if (f.url === "" && !/^\(.*\)$/.test(f.functionName) && parent.has(node.id)) name = categoryOf(byId.get(parent.get(node.id)));
    else name = CATEGORIES.find(([, test]) => test(f))[0];
    memo.set(node.id, name);
    return name;
  };
  const self = new Map();
  for (let i = 0; i < profile.samples.length; i++) {
    const node = byId.get(profile.samples[i]);
    const dt = profile.timeDeltas[i + 1] ?? 0;
    if (!node || node.callFrame.functionName === "(idle)") continue;
    const name = categoryOf(node);
    self.set(name, (self.get(name) ?? 0) + dt);
  }
  return Object.fromEntries(CATEGORIES.map(([name]) => [name, self.get(name) ?? 0]));
}

/** The wasm modules (by profile URL) a profile ran. */
const wasmUrls = (profile) => new Set(profile.nodes.map((n) => n.callFrame.url).filter((u) => u.startsWith("wasm://")));

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startServerProcess({ seed: 3 });
  const dir = path.join(OUT, "profile");
  fs.mkdirSync(dir, { recursive: true });
  const runs = Object.fromEntries(CLIENT_IDS.map((id) => [id, []]));
  const profiles = [];
  const fetchWasm = new Set();
  try {
    for (let r = 0; r < rounds; r++) {
      for (const id of r % 2 ? [...CLIENT_IDS].reverse() : CLIENT_IDS) {
        const file = path.join(dir, `${id}-${r}.cpuprofile`);
        const out = JSON.parse(
          execFileSync(process.execPath, [path.join(HERE, "profile-run.mjs"), id, server.url, file, "--tiles", String(tiles)], { encoding: "utf8" }),
        );
        const profile = JSON.parse(fs.readFileSync(file, "utf8"));
        // A raw-fetch run loads no tilefetch: every wasm module it ran is fetch's own.
        if (id === "raw-fetch") for (const url of wasmUrls(profile)) fetchWasm.add(url);
        profiles.push([id, out.wallMs, profile]);
      }
    }
  } finally {
    await server.stop();
  }
  for (const [id, wallMs, profile] of profiles) runs[id].push({ wallMs, categories: selfTimeByCategory(profile, fetchWasm) });
  const perCall = (id, pick) => median(runs[id].map(pick)) / tiles;
  const result = {
    tiles,
    rounds,
    concurrency: 16,
    node: process.version,
    clients: Object.fromEntries(
      CLIENT_IDS.map((id) => [
        id,
        {
          wallMsPerCall: median(runs[id].map((r) => r.wallMs)) / tiles,
          usPerCall: Object.fromEntries(CATEGORIES.map(([name]) => [name, perCall(id, (r) => r.categories[name])])),
          busyUsPerCall: perCall(id, (r) => Object.values(r.categories).reduce((a, b) => a + b, 0)),
        },
      ]),
    ),
    runs,
  };
  fs.writeFileSync(path.join(OUT, "profile.json"), JSON.stringify(result, null, 1));
  const f = (x) => x.toFixed(1);
  for (const [name] of CATEGORIES) {
    const [a, b] = CLIENT_IDS.map((id) => result.clients[id].usPerCall[name]);
    process.stderr.write(`  ${name.padEnd(34)} raw ${f(a).padStart(7)} µs  fetchTile ${f(b).padStart(7)} µs  (+${f(b - a)})\n`);
  }
  const [ra, rb] = CLIENT_IDS.map((id) => result.clients[id].busyUsPerCall);
  process.stderr.write(`  ${"busy (all but idle)".padEnd(34)} raw ${f(ra).padStart(7)} µs  fetchTile ${f(rb).padStart(7)} µs  (+${f(rb - ra)})\n`);
}
