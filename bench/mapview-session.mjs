#!/usr/bin/env node
// Two map sessions of issue "Never slower than the map's own loader", each library once with its
// own loader and once with the tilefetch adapter, in headless Chromium over the loopback fault
// server (healthy):
//
// - fast pan: the map opens and loads; then a new view every PAN_EVERY_MS (PANS of them, one way)
//   on a server answering every tile after 300 ms. Measured: from the first pan until the last
//   view is complete, and the requests the server saw from the first pan until then (tiles of
//   views already gone that still went out).
// - long session: MOVES moves back and forth among a few places, each waiting for its view, on
//   the 30–80 ms server sending tiles without a Cache-Control header (most tile servers send
//   none). Measured: the server's requests per tile shown (a tile shown again that the page
//   already has costs the own <img> loader no request).
//
// Writes bench/out/mapview-session.json.
//
//   node bench/mapview-session.mjs [--libs ol,leaflet,maplibre] [--rounds N] (3 fast pans each) [--moves N] (100;
//     two long sessions each, in alternating order)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setUp, viewTiles } from "../tests/browser/adapters-common.mjs";
import { option } from "./cli.mjs";
import { LIBS, STEP_LIMIT_MS, stepInPage } from "./mapview.mjs";
import { median, prng } from "./stats.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));

export const PANS = 12;
export const PAN_EVERY_MS = 100;
/** Global pixels each pan moves the view by (east and a little south). */
const PAN_PX = [400, 100];
export const FAST_PAN_LATENCY = "delay=300";
export const SESSION_LATENCY = "delay=30&delayjitter=50&cc=none";
const ZOOM = 12;
const START = [2048 * 256 + 128, 1360 * 256 + 77];

/** The long session's moves: to one of five places 500 px apart, seeded, never the same twice in a row. */
export function sessionMoves(count, seed = 5) {
  const places = [
    [0, 0],
    [500, 0],
    [0, 500],
    [-500, 0],
    [0, -500],
  ].map(([dx, dy]) => [START[0] + dx, START[1] + dy]);
  const rand = prng(seed);
  const moves = [];
  let at = 0;
  for (let i = 0; i < count; i++) {
    let next = at;
    while (next === at) next = Math.floor(rand() * places.length);
    moves.push(places[next]);
    at = next;
  }
  return moves;
}

/** In the page: the pans, one every `everyMs`, then waits until the last view's tiles are loaded. */
async function panInPage({ centers, z, everyMs, keys, limitMs }) {
  const t0 = performance.now();
  for (const [i, center] of centers.entries()) {
    const due = t0 + i * everyMs;
    while (performance.now() < due) await new Promise((r) => setTimeout(r, Math.max(0, due - performance.now())));
    window.harness.view(center, z);
  }
  for (;;) {
    const states = window.harness.states();
    if (keys.every((k) => states[k]?.state === "loaded")) return { completeMs: performance.now() - t0 };
    if (performance.now() - t0 > limitMs) return { completeMs: null };
    await new Promise((r) => setTimeout(r, 5));
  }
}

async function fastPan(env, lib, loader, round) {
  env.srv.reset();
  const run = `fp-${lib.id}-${round}`;
  const template = `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}&${FAST_PAN_LATENCY}`;
  const page = await env.open();
  try {
    const spec = { ...lib.spec, template, zoom: ZOOM, center: START, own: loader === "own" };
    const open = { action: "open", center: START, z: ZOOM };
    const opened = await page.evaluate(stepInPage, { step: open, spec, keys: viewTiles(ZOOM, START).map((t) => t.key), level: null, limitMs: STEP_LIMIT_MS });
    if (opened.completeMs === null) throw new Error(`${lib.id} ${loader}: the first view did not load`);
    const before = env.srv.requests(run);
    const abortedBefore = env.srv.aborted(run);
    const centers = Array.from({ length: PANS }, (_, i) => [START[0] + PAN_PX[0] * (i + 1), START[1] + PAN_PX[1] * (i + 1)]);
    const last = centers.at(-1);
    const r = await page.evaluate(panInPage, {
      centers,
      z: ZOOM,
      everyMs: PAN_EVERY_MS,
      keys: viewTiles(ZOOM, last).map((t) => t.key),
      limitMs: STEP_LIMIT_MS + PANS * PAN_EVERY_MS,
    });
    return { lib: lib.id, loader, round, completeMs: r.completeMs, requests: env.srv.requests(run) - before, aborted: env.srv.aborted(run) - abortedBefore };
  } finally {
    await page.closeContext();
  }
}

async function longSession(env, lib, loader, moves) {
  env.srv.reset();
  const run = `ls-${lib.id}`;
  const template = `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}&${SESSION_LATENCY}`;
  const page = await env.open();
  let shown = 0;
  let incomplete = 0;
  try {
    for (const [i, center] of [START, ...sessionMoves(moves)].entries()) {
      const step = { action: i === 0 ? "open" : "pan", center, z: ZOOM };
      const spec = { ...lib.spec, template, zoom: ZOOM, center, own: loader === "own" };
      const keys = viewTiles(ZOOM, center).map((t) => t.key);
      const r = await page.evaluate(stepInPage, { step, spec, keys, level: null, limitMs: STEP_LIMIT_MS });
      shown += keys.length;
      if (r.completeMs === null) incomplete++;
    }
  } finally {
    await page.closeContext();
  }
  const requests = env.srv.requests(run);
  const tilesAsked = new Set(env.srv.log.filter((e) => e.key.startsWith(`${run}/`)).map((e) => e.key)).size;
  return { lib: lib.id, loader, moves, shown, incomplete, requests, tilesAsked };
}

async function main() {
  const libs = option("libs", "ol,leaflet,maplibre").split(",");
  const rounds = Number(option("rounds", 3));
  const moves = Number(option("moves", 100));
  const t0 = Date.now();
  const fast = [];
  const sessions = [];
  for (const lib of LIBS.filter((l) => libs.includes(l.id))) {
    const env = await setUp(lib.entry, { webgl: lib.webgl });
    try {
      for (let round = 0; round < rounds; round++) {
        for (const loader of round % 2 === 0 ? ["own", "tilefetch"] : ["tilefetch", "own"]) {
          const r = await fastPan(env, lib, loader, round);
          fast.push(r);
          process.stderr.write(
            `  ${lib.id.padEnd(8)} fast pan  ${loader.padEnd(9)} last view complete ${r.completeMs === null ? "—" : Math.round(r.completeMs)} ms after the first pan, ${r.requests} requests (${r.aborted} aborted by the client)\n`,
          );
        }
      }
      for (const loader of ["own", "tilefetch", "tilefetch", "own"]) {
        const r = await longSession(env, lib, loader, moves);
        sessions.push(r);
        process.stderr.write(
          `  ${lib.id.padEnd(8)} session   ${loader.padEnd(9)} ${r.shown} tiles shown over ${moves} moves (${r.incomplete} incomplete), ${r.requests} requests (${(r.requests / r.shown).toFixed(3)} per tile shown), ${r.tilesAsked} distinct tiles\n`,
        );
      }
    } finally {
      await env.close();
    }
  }
  for (const lib of libs) {
    const of = (loader) => fast.filter((r) => r.lib === lib && r.loader === loader);
    const summary = (loader) =>
      `${Math.round(median(of(loader).map((r) => r.completeMs ?? Number.POSITIVE_INFINITY)))} ms, ${median(of(loader).map((r) => r.requests))} requests`;
    process.stderr.write(`${lib}: fast pan medians, own ${summary("own")}; adapter ${summary("tilefetch")}\n`);
  }
  const out = {
    panEveryMs: PAN_EVERY_MS,
    pans: PANS,
    fastPanLatency: FAST_PAN_LATENCY,
    sessionLatency: SESSION_LATENCY,
    moves,
    rounds,
    totalMs: Date.now() - t0,
    fast,
    sessions,
  };
  fs.mkdirSync(path.join(HERE, "out"), { recursive: true });
  const file = path.join(HERE, "out", "mapview-session.json");
  fs.writeFileSync(file, JSON.stringify(out, null, 1));
  process.stderr.write(
    `map sessions: written to ${path.relative(process.cwd(), file)} in ${Math.round((Date.now() - t0) / 1000)} s\nreproduce: ${["node bench/mapview-session.mjs", ...process.argv.slice(2)].join(" ")}\n`,
  );
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
