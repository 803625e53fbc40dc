#!/usr/bin/env node
// Overhead on the healthy scenario: every client fetches the same 400 tiles (32 at a time) from
// the loopback fault server in a separate process, in alternating rounds (bench/overhead-rounds.mjs),
// in Node (wall and process CPU time) and in headless Chromium (wall time). Writes
// bench/out/overhead.json.
//
//   node bench/overhead.mjs [--tiles 400] [--rounds 11] [--chromium-tiles 200] [--chromium-rounds 9] [--only node|chromium]
//
// A before/after of a change on these tiles: bench/beside.mjs, which runs an earlier commit's
// module in the same rounds.
//
// Node also runs the wasm floor (bench/floor/client.mjs, built by bench/floor/build.sh): the plain
// wrapper with its fetch done from a wasm-bindgen async function.
//
// Chromium gets fewer tiles and rounds: with 6 connections per host its batches take ~10× longer.
import fs from "node:fs";
import path from "node:path";
import { CLIENTS } from "./clients/index.mjs";
import * as floor from "./floor/client.mjs";
import { FLOOR_ID, floorIsBuilt } from "./floor/id.mjs";
import { runRounds, summarise } from "./overhead-rounds.mjs";
import { startServerProcess } from "./server-process.mjs";
import { bundle, HERE, ROOT, OUT } from "./bundle.mjs";
import { launchBrowser, startStaticServer } from "../tests/browser/helpers.mjs";
import { option } from "./cli.mjs";

const opt = option;
const nodeRun = { tiles: Number(opt("tiles", 400)), rounds: Number(opt("rounds", 11)) };
const chromiumRun = { tiles: Number(opt("chromium-tiles", 200)), rounds: Number(opt("chromium-rounds", 9)) };
const warmup = 2;
const concurrency = 32;
const only = opt("only", null);

const urlsOf = (serverUrl, tiles) =>
  Array.from({ length: tiles }, (_, i) => `${serverUrl}/tile/15/${16000 + (i % 20)}/${10000 + Math.floor(i / 20)}.png?run=overhead`);

async function inNode(serverUrl, { tiles, rounds }) {
  const tilefetch = await import("../pkg/node.js");
  // The wasm floor runs beside the plain wrapper (Node only: it is built for Node).
  const withFloor = floorIsBuilt();
  const modules = Object.entries(CLIENTS).flatMap((entry) => (entry[0] === "plain-wrapper" && withFloor ? [entry, [FLOOR_ID, floor]] : [entry]));
  const clients = Object.fromEntries(modules.map(([id, m]) => [id, m.create({ tilefetch })]));
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const samples = await runRounds({ clients, urls: urlsOf(serverUrl, tiles), concurrency, rounds, warmup, cpu });
  for (const c of Object.values(clients)) c.close?.();
  return { tiles, rounds, samples, summary: summarise(samples, { tiles }) };
}

async function inChromium(serverUrl, { tiles, rounds }) {
  await bundle(path.join(HERE, "browser/entry.mjs"), path.join(OUT, "browser/bench.js"));
  const statics = await startStaticServer(ROOT, { allow: ["/pkg/", "/bench/"] });
  const browser = await launchBrowser();
  try {
    const page = await (await browser.newContext()).newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.goto(`${statics.url}/bench/browser/page.html`);
    const samples = await page.evaluate(
      async ({ urls, concurrency, rounds, warmup }) => {
        const { CLIENTS, runRounds } = await import("/bench/out/browser/bench.js");
        const tilefetch = await import("/pkg/browser.js");
        const clients = Object.fromEntries(Object.entries(CLIENTS).map(([id, m]) => [id, m.create({ tilefetch })]));
        return runRounds({ clients, urls, concurrency, rounds, warmup });
      },
      { urls: urlsOf(serverUrl, tiles), concurrency, rounds, warmup },
    );
    if (errors.length) throw new Error(`page errors: ${errors.join("\n")}`);
    return { version: browser.version(), tiles, rounds, samples, summary: summarise(samples, { tiles }) };
  } finally {
    await browser.close();
    await statics.close();
  }
}

const server = await startServerProcess();
const result = { warmup, concurrency };
try {
  if (only !== "chromium") {
    result.node = await inNode(server.url, nodeRun);
    process.stderr.write(`overhead, Node: ${JSON.stringify(result.node.summary)}\n`);
    for (const [id, c] of Object.entries(result.node.summary))
      process.stderr.write(
        `overhead, Node, ${id}: ${c.cpuUsPerCall.toFixed(1)} µs CPU per call, ${(c.extraCpuOverReferenceUsPerCall ?? 0).toFixed(1)} over the wrapper\n`,
      );
  }
  if (only !== "node") {
    result.chromium = await inChromium(server.url, chromiumRun);
    process.stderr.write(`overhead, Chromium: ${JSON.stringify(result.chromium.summary)}\n`);
  }
} finally {
  await server.stop();
}
fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(path.join(OUT, "overhead.json"), JSON.stringify(result, null, 1));
