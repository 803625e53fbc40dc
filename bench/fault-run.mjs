#!/usr/bin/env node
// One run of the fault benchmark: one client, one scenario, its own loopback fault server, N
// distinct tiles, C at a time, each under a deadline the harness enforces with an AbortSignal
// (a map that no longer wants a tile aborts it). Prints one JSON object with the run's figures.
//
//   node bench/fault-run.mjs CLIENT SCENARIO [--tiles 400] [--concurrency 32] [--deadline 6000] [--seed 7]
//
// bench/fault.mjs runs every client × scenario through this, each in a process of its own, so
// no client's state (tilefetch's default client, connection pools, timers) leaks into another's run.
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import fs from "node:fs";
import { startFaultServer, tilePng } from "../tests/server/fault-server.mjs";
import { CLIENTS } from "./clients/index.mjs";
import { scenarioById } from "./scenarios.mjs";
import { bins, quantile } from "./stats.mjs";

const RUN = "bench";
// How long the harness waits, after the last deadline, for calls that outlive their abort
// (a library sleeping through an abort); a call still pending then is counted as unsettled.
const STRAGGLER_WAIT_MS = 30_000;

/** The tiles of a run: distinct z/x/y, so no client can serve one from another's request. */
export const tileCoords = (i) => [14, 8000 + (i % 20), 5000 + Math.floor(i / 20)];

/** Failure reason for the tables: tilefetch's kind, else the error's name and a short message. */
function reasonOf(error) {
  if (error?.kind) return error.kind;
  const name = error?.name ?? typeof error;
  const message = String(error?.message ?? error)
    .split("\n")[0]
    .slice(0, 40);
  return `${name}: ${message}`;
}

export async function runFault({ clientId, scenarioId, tiles = 400, concurrency = 32, deadlineMs = 6000, seed = 7 }) {
  const clientModule = CLIENTS[clientId];
  if (!clientModule) throw new Error(`unknown client ${clientId}; known: ${Object.keys(CLIENTS).join(", ")}`);
  const scenario = scenarioById(scenarioId);
  const tilefetch = clientModule.anchor === "tilefetch" ? await import("../pkg/node.js") : null;
  const srv = await startFaultServer({ seed });
  const client = clientModule.create({ tilefetch });
  const query = new URLSearchParams({ run: RUN, ...scenario.params }).toString();
  const urlOf = ([z, x, y]) => `${srv.url}/tile/${z}/${x}/${y}.png?${query}`;

  // Encode every tile before the clock starts: the server and the check share this cache.
  for (let i = 0; i < tiles; i++) tilePng(...tileCoords(i));
  const results = new Array(tiles);
  const settledAll = [];
  let outageWindow = null;
  let outageTimer = null;
  const t0 = performance.now();
  const serverT0 = srv.now();
  if (scenario.outage) {
    outageTimer = setTimeout(() => {
      const w = srv.outage(RUN, scenario.outage.ms);
      outageWindow = { start: w.start - serverT0, end: w.end - serverT0 };
    }, scenario.outage.atMs);
  }

  // One tile: the call, the harness's deadline, and when (relative to t0) it settled.
  const runTile = (i) => {
    const coords = tileCoords(i);
    const start = performance.now() - t0;
    const controller = new AbortController();
    let deadlineFired;
    const deadline = new Promise((resolve) => {
      deadlineFired = resolve;
    });
    const timer = setTimeout(() => {
      controller.abort(new DOMException("the tile's deadline passed", "TimeoutError"));
      deadlineFired();
    }, deadlineMs);
    let call;
    try {
      call = Promise.resolve(client.get(urlOf(coords), controller.signal));
    } catch (error) {
      call = Promise.reject(error);
    }
    const settled = call
      .then(
        (data) => {
          const late = controller.signal.aborted;
          const truth = tilePng(...coords);
          const same = data instanceof Uint8Array && Buffer.from(data.buffer, data.byteOffset, data.byteLength).equals(truth);
          return { outcome: late ? "late" : same ? "correct" : "wrong" };
        },
        (error) => ({ outcome: "failed", reason: reasonOf(error) }),
      )
      .then((r) => {
        clearTimeout(timer);
        results[i] = { ...r, start, end: performance.now() - t0 };
      });
    settledAll.push(settled);
    // The pool slot frees when the call settles or its deadline passes, whichever is first.
    return Promise.race([settled, deadline]);
  };

  let next = 0;
  const worker = async () => {
    while (next < tiles) await runTile(next++);
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - t0;
  let stragglerTimer;
  await Promise.race([
    Promise.all(settledAll),
    new Promise((resolve) => {
      stragglerTimer = setTimeout(resolve, STRAGGLER_WAIT_MS);
    }),
  ]);
  clearTimeout(stragglerTimer);
  clearTimeout(outageTimer);
  const settledMs = performance.now() - t0;

  const arrivals = srv.log.map((e) => e.t - serverT0);
  const keys = new Set(srv.log.map((e) => e.key));
  const count = (o) => results.filter((r) => r?.outcome === o).length;
  const correct = results.filter((r) => r?.outcome === "correct");
  const latencies = correct.map((r) => r.end - r.start);
  const reasons = {};
  for (const r of results) if (r?.outcome === "failed") reasons[r.reason] = (reasons[r.reason] ?? 0) + 1;
  const lastArrival = arrivals.length ? Math.max(...arrivals) : 0;
  const per100 = bins(arrivals, { from: 0, to: lastArrival + 1, binMs: 100 });

  const out = {
    client: clientId,
    scenario: scenarioId,
    tiles,
    concurrency,
    deadlineMs,
    seed,
    correct: correct.length,
    wrong: count("wrong"),
    failed: count("failed"),
    late: count("late"),
    unsettled: results.filter((r) => r === undefined).length + (tiles - results.length),
    reasons,
    requests: srv.log.length,
    requestsPerTile: srv.log.length / tiles,
    permanentExtra: scenario.permanent ? srv.log.length - keys.size : null,
    latencyMs: { p50: quantile(latencies, 0.5), p95: quantile(latencies, 0.95), p99: quantile(latencies, 0.99) },
    wallMs,
    settledMs,
    peakPer100ms: Math.max(0, ...per100),
    // The most requests the server had open at once (arrived, not yet answered or closed).
    peakInFlight: srv.peakConcurrent(RUN),
    abortedByClient: srv.aborted(),
    // From the run's start until 95 % of the tiles were delivered correctly (null: never).
    msTo95: null,
    // A token bucket's refusals, and the rate it served while busy: from the arrival of the
    // quarter of its served requests to that of three quarters (tiles per second).
    refused: srv.log.filter((e) => e.fault === "bucket-429" || e.fault === "window-429").length,
    servedPerSecond: servedRate(srv.log.filter((e) => e.fault === "bucket").map((e) => e.t)),
  };
  // The correct tiles' end times, and how many make 95 %: for msTo95 and the outage's recovery.
  const need = Math.ceil(0.95 * tiles);
  const ends = correct.map((r) => r.end).sort((a, b) => a - b);
  if (ends.length >= need) out.msTo95 = ends[need - 1];
  if (scenario.outage) {
    const w = outageWindow;
    const during = w ? arrivals.filter((t) => t >= w.start && t < w.end).length : null;
    out.outage = {
      window: w,
      requestsDuring: during,
      requestsPerSecondDuring: w ? during / ((w.end - w.start) / 1000) : null,
      peakPer100msDuring: w ? Math.max(0, ...bins(arrivals, { from: w.start, to: w.end, binMs: 100 })) : null,
      // From the outage's end until 95 % of the tiles were delivered correctly (0 if before).
      msTo95AfterOutage: w && ends.length >= need ? Math.max(0, ends[need - 1] - w.end) : null,
      per100ms: bins(arrivals, { from: 0, to: Math.max(lastArrival + 1, w ? w.end + 3000 : 0), binMs: 100 }),
    };
  }
  await client.close?.();
  await srv.close();
  return out;
}

/** Requests per second between the arrivals of the first and the third quarter of `times`. */
function servedRate(times) {
  if (times.length < 8) return null;
  const sorted = [...times].sort((a, b) => a - b);
  const from = sorted[Math.floor(sorted.length / 4)];
  const to = sorted[Math.floor((3 * sorted.length) / 4)];
  return to > from ? ((Math.floor((3 * sorted.length) / 4) - Math.floor(sorted.length / 4)) / (to - from)) * 1000 : null;
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href;
if (isMain) {
  const args = process.argv.slice(2);
  const flag = (name, fallback) => {
    const i = args.indexOf(`--${name}`);
    return i >= 0 ? Number(args[i + 1]) : fallback;
  };
  const [clientId, scenarioId] = args.filter((a, i) => !a.startsWith("--") && !args[i - 1]?.startsWith("--"));
  const result = await runFault({
    clientId,
    scenarioId,
    tiles: flag("tiles", 400),
    concurrency: flag("concurrency", 32),
    deadlineMs: flag("deadline", 6000),
    seed: flag("seed", 7),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  // Libraries may leave timers behind (a sleep they never cancel); the run's figures are taken.
  process.exit(0);
}
