#!/usr/bin/env node
// Where the time of a call goes, on real sockets: raw fetch, the plain JS wrapper and tilefetch's
// fetchTile each fetch
// the same healthy tiles from the loopback fault server (its own process) under V8's sampling
// profiler (bench/profile-run.mjs, a process per client and round); the samples' self time is
// split by where the code lives: the wasm module, its JS glue, undici (Node's fetch), the
// AbortController/AbortSignal code, timers, the microtask/promise machinery, GC, and the rest.
// Per call, medians over rounds. The same three clients run in headless Chromium too, each in a
// fresh page, under the same profiler through the DevTools protocol; there fetch's own work runs
// in the browser's network process, and what the page pays for it shows as the built-ins the
// page calls (fetch, Response, Headers, AbortController, timers). In Node, tilefetch as it was at
// the "boundary" issue's start (bench/before/) is profiled in the same rounds when it is built.
// Writes bench/out/profile.json.
//
//   node bench/profile.mjs [--tiles 4000] [--rounds 3] [--chromium-tiles 1500] [--only node|chromium]
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { startServerProcess } from "./server-process.mjs";
import { bundle, HERE, OUT, ROOT } from "./bundle.mjs";
import { launchBrowser, startStaticServer } from "../tests/browser/helpers.mjs";
import { median } from "./stats.mjs";
import { option } from "./cli.mjs";
import { profileTiles } from "./profile-tiles.mjs";
import { BEFORE_ID, beforeIsBuilt } from "./before/id.mjs";

const opt = (name, fallback) => Number(option(name, fallback));
const tiles = opt("tiles", 4000);
const rounds = opt("rounds", 3);
const chromiumTiles = opt("chromium-tiles", 1500);
const only = option("only", null);
if (only !== null && only !== "node" && only !== "chromium") {
  console.error(`--only takes node or chromium, not ${only}`);
  process.exit(2);
}
const CLIENT_IDS = ["raw-fetch", "plain-wrapper", "tilefetch-fetchtile"];
// In Node, also tilefetch at the boundary issue's start (bench/before/build.sh), when built: the
// issue's before and after, profiled in the same rounds.
const NODE_IDS = beforeIsBuilt() ? [...CLIENT_IDS, BEFORE_ID] : CLIENT_IDS;

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
 * Where a Chromium page's profile node's code lives. A frame without a URL that is not one of
 * V8's own ("(program)", "(garbage collector)") is a built-in the page called: fetch, Response,
 * Headers, AbortController/AbortSignal, timers, URL. V8 shows no frame of its own for promise
 * reactions there: their cost is in the functions they run and in "(program)".
 */
const builtIn = (names) => (f) => f.url === "" && !/^\(.*\)$/.test(f.functionName) && names.test(f.functionName);
export const CHROMIUM_CATEGORIES = [
  // A page's wasm frames carry the .wasm's URL; the calls between wasm and JS are V8's own frames.
  ["wasm (tilefetch's module)", (f) => f.url.startsWith("wasm://") || f.url.endsWith(".wasm") || /^(wasm-to-js|js-to-wasm)/.test(f.functionName)],
  ["glue (pkg/, gen/tilefetch.js)", (f) => /\/pkg\/(gen\/)?[\w-]+\.js$/.test(f.url)],
  ["bench harness", (f) => /\/bench\//.test(f.url)],
  ["fetch, Response, Headers (built-ins)", builtIn(/^(fetch|arrayBuffer|get|has|Request|Response|Headers|status|ok|headers)$/)],
  ["AbortController / AbortSignal (built-ins)", builtIn(/^(AbortController|abort|signal|aborted|reason|any|addEventListener|removeEventListener)$/)],
  ["timers (built-ins)", builtIn(/^(setTimeout|clearTimeout)$/)],
  ["URL (built-in)", builtIn(/^(URL|href)$/)],
  ["other built-ins", builtIn(/./)],
  ["GC", (f) => f.functionName === "(garbage collector)"],
  ["native and runtime ((program))", (f) => f.functionName === "(program)"],
  ["other JS", () => true],
];

/**
 * Self time (µs) per category of one profile (idle time left out). A native frame (no URL:
 * `writeLatin1String`, a builtin) counts where the JS that called it does, and a wasm frame of
 * one of `fetchWasm` (undici's llhttp parser, the wasm a raw-fetch run loads) counts as fetch.
 */
export function selfTimeByCategory(profile, fetchWasm = new Set(), categories = CATEGORIES, { nativeToCaller = true } = {}) {
  // Node's built-ins are JS (undici, events): a native frame there counts where its caller does
  // (nativeToCaller). Chromium's are C++, categories of their own.
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const memo = new Map();
  const categoryOf = (node) => {
    if (memo.has(node.id)) return memo.get(node.id);
    const f = node.callFrame;
    let name;
    if (fetchWasm.has(f.url)) name = "fetch (undici)";
    else if (nativeToCaller && f.url === "" && !/^\(.*\)$/.test(f.functionName) && parent.has(node.id)) name = categoryOf(byId.get(parent.get(node.id)));
    else name = categories.find(([, test]) => test(f))[0];
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
  return Object.fromEntries(categories.map(([name]) => [name, self.get(name) ?? 0]));
}

/** Per call: median wall time and self time by category over a client's runs. */
function perCallOf(runsOf, categories, count) {
  const perCall = (pick) => median(runsOf.map(pick)) / count;
  return {
    wallMsPerCall: median(runsOf.map((r) => r.wallMs)) / count,
    usPerCall: Object.fromEntries(categories.map(([name]) => [name, perCall((r) => r.categories[name])])),
    busyUsPerCall: perCall((r) => Object.values(r.categories).reduce((a, b) => a + b, 0)),
  };
}

/**
 * The clients in headless Chromium: per client and round a fresh page fetches `warm` tiles, then
 * `count` under the profiler (100 µs), 16 at a time. Returns the runs by client.
 */
async function inChromium(serverUrl, count) {
  await bundle(path.join(HERE, "browser/entry.mjs"), path.join(OUT, "browser/bench.js"));
  const statics = await startStaticServer(ROOT, { allow: ["/pkg/", "/bench/"] });
  const browser = await launchBrowser();
  const runs = Object.fromEntries(CLIENT_IDS.map((id) => [id, []]));
  const urls = (n, firstRow) => profileTiles(serverUrl, n, firstRow);
  try {
    for (let r = 0; r < rounds; r++) {
      for (const id of r % 2 ? [...CLIENT_IDS].reverse() : CLIENT_IDS) {
        const context = await browser.newContext();
        const page = await context.newPage();
        const errors = [];
        page.on("pageerror", (e) => errors.push(String(e)));
        await page.goto(`${statics.url}/bench/browser/page.html`);
        const run = async (list) =>
          page.evaluate(
            async ({ id, list }) => {
              if (!window.benchClient) {
                const { CLIENTS } = await import("/bench/out/browser/bench.js");
                const tilefetch = CLIENTS[id].anchor === "tilefetch" ? await import("/pkg/browser.js") : null;
                window.benchClient = CLIENTS[id].create({ tilefetch });
              }
              let next = 0;
              const worker = async () => {
                while (next < list.length) {
                  const data = await window.benchClient.get(list[next++], new AbortController().signal);
                  if (!(data instanceof Uint8Array) || data.length < 100) throw new Error("not a tile");
                }
              };
              const t0 = performance.now();
              await Promise.all(Array.from({ length: 16 }, worker));
              return performance.now() - t0;
            },
            { id, list },
          );
        await run(urls(400, 20000 + r)); // warm-up: JIT, connections
        const cdp = await context.newCDPSession(page);
        await cdp.send("Profiler.enable");
        await cdp.send("Profiler.setSamplingInterval", { interval: 100 });
        await cdp.send("Profiler.start");
        const wallMs = await run(urls(count, 10000 + r * 100));
        const { profile } = await cdp.send("Profiler.stop");
        await context.close();
        fs.writeFileSync(path.join(OUT, "profile", `chromium-${id}-${r}.cpuprofile`), JSON.stringify(profile));
        if (errors.length) throw new Error(`page errors (${id}): ${errors.join("\n")}`);
        runs[id].push({ wallMs, categories: selfTimeByCategory(profile, new Set(), CHROMIUM_CATEGORIES, { nativeToCaller: false }) });
      }
    }
  } finally {
    await browser.close();
    await statics.close();
  }
  return { version: browser.version(), tiles: count, runs };
}

/** The wasm modules (by profile URL) a profile ran. */
const wasmUrls = (profile) => new Set(profile.nodes.map((n) => n.callFrame.url).filter((u) => u.startsWith("wasm://")));

if (import.meta.url === `file://${process.argv[1]}`) {
  const server = await startServerProcess({ seed: 3 });
  const dir = path.join(OUT, "profile");
  fs.mkdirSync(dir, { recursive: true });
  const runs = Object.fromEntries(NODE_IDS.map((id) => [id, []]));
  const profiles = [];
  const fetchWasm = new Set();
  let chromium = null;
  try {
    for (let r = 0; only !== "chromium" && r < rounds; r++) {
      for (const id of r % 2 ? [...NODE_IDS].reverse() : NODE_IDS) {
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
    if (only !== "node") chromium = await inChromium(server.url, chromiumTiles);
  } finally {
    await server.stop();
  }
  for (const [id, wallMs, profile] of profiles) runs[id].push({ wallMs, categories: selfTimeByCategory(profile, fetchWasm) });
  // With --only, the other platform's half is kept from the last run (with its own rounds).
  const previous = fs.existsSync(path.join(OUT, "profile.json")) ? JSON.parse(fs.readFileSync(path.join(OUT, "profile.json"), "utf8")) : {};
  const kept = only === "chromium" ? previous.clients : only === "node" ? previous.chromium : true;
  if (!kept) {
    console.error(`--only ${only}: bench/out/profile.json has no ${only === "chromium" ? "Node" : "Chromium"} half to keep; run both`);
    process.exit(1);
  }
  const node =
    only === "chromium"
      ? { clients: previous.clients, runs: previous.runs, tiles: previous.tiles, node: previous.node, rounds: previous.rounds }
      : { tiles, node: process.version, rounds, clients: Object.fromEntries(NODE_IDS.map((id) => [id, perCallOf(runs[id], CATEGORIES, tiles)])), runs };
  const result = {
    ...node,
    concurrency: 16,
    chromium:
      only === "node"
        ? previous.chromium
        : {
            version: chromium.version,
            tiles: chromium.tiles,
            rounds,
            clients: Object.fromEntries(CLIENT_IDS.map((id) => [id, perCallOf(chromium.runs[id], CHROMIUM_CATEGORIES, chromium.tiles)])),
            runs: chromium.runs,
          },
  };
  fs.writeFileSync(path.join(OUT, "profile.json"), JSON.stringify(result, null, 1));
  const f = (x) => x.toFixed(1);
  for (const [where, part, categories] of [
    ["Node", result, CATEGORIES],
    ["Chromium", result.chromium, CHROMIUM_CATEGORIES],
  ]) {
    if (!part?.clients) continue;
    process.stderr.write(`${where} (µs per call: raw fetch, plain wrapper, fetchTile)\n`);
    const row = (name, pick) => {
      const [a, w, b] = CLIENT_IDS.map((id) => (part.clients[id] ? pick(part.clients[id]) : NaN));
      process.stderr.write(
        `  ${name.padEnd(40)} ${f(a).padStart(7)} ${f(w).padStart(7)} ${f(b).padStart(7)}  (+${f(b - a)} over raw, +${f(b - w)} over wrapper)\n`,
      );
    };
    for (const [name] of categories) row(name, (c) => c.usPerCall[name]);
    row("busy (all but idle)", (c) => c.busyUsPerCall);
  }
}
