#!/usr/bin/env node
// The fault benchmark: every client × every scenario (bench/fault-run.mjs, one process each),
// at most two runs busy on the CPU at once (bench/cpu-pool.mjs). Writes bench/out/fault.json.
//
//   node bench/fault.mjs [--tiles 400] [--clients a,b] [--scenarios x,y]
//
// A scenario with its own `run` (bench/scenarios.mjs) keeps its tile count, concurrency and
// deadline whatever --tiles says. Prints each run as it ends, each client's 429 share against a
// fixed window's floor, and the command that reproduces the run.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { CLIENTS } from "./clients/index.mjs";
import { SCENARIOS, scenarioById, windowFloorMs } from "./scenarios.mjs";
import { runPool } from "./cpu-pool.mjs";
import { option } from "./cli.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const opt = option;
const tiles = Number(opt("tiles", process.env.BENCH_TILES ?? 400));
const clients = opt("clients", Object.keys(CLIENTS).join(",")).split(",");
const scenarios = opt("scenarios", SCENARIOS.map((s) => s.id).join(",")).split(",");

/** fault-run.mjs's flags for a scenario's `run` settings, the defaults elsewhere. */
function runFlags(run = {}) {
  const flags = ["--tiles", String(run.tiles ?? tiles)];
  if (run.concurrency) flags.push("--concurrency", String(run.concurrency));
  if (run.deadlineMs) flags.push("--deadline", String(run.deadlineMs));
  return flags;
}

const runs = [];
const t0 = performance.now();
const jobs = scenarios.flatMap((scenario) =>
  clients.map((client) => ({
    // A scenario may set its own tile count, concurrency and deadline (`run`).
    args: [path.join(HERE, "fault-run.mjs"), client, scenario, ...runFlags(scenarioById(scenario).run)],
    onDone(stdout) {
      const run = JSON.parse(stdout.trim().split("\n").pop());
      runs.push(run);
      process.stderr.write(
        `  ${scenario.padEnd(18)} ${client.padEnd(20)} ${run.correct}/${run.tiles} correct, ${run.wrong} wrong, ` +
          `${run.failed} failed, ${run.requests} requests (${run.requestsPerTile.toFixed(2)} per tile), ` +
          `p95 ${run.latencyMs.p95 == null ? "—" : Math.round(run.latencyMs.p95)} ms, ${(run.wallMs / 1000).toFixed(1)} s\n`,
      );
    },
  })),
);
process.stderr.write(`fault benchmark: ${jobs.length} runs of ${tiles} tiles, or a scenario's own count\n`);
await runPool(jobs);
const totalMs = performance.now() - t0;
fs.mkdirSync(path.join(HERE, "out"), { recursive: true });
fs.writeFileSync(path.join(HERE, "out/fault.json"), JSON.stringify({ tiles, concurrency: 32, deadlineMs: 6000, totalMs, runs }, null, 1));
// A fixed window: what a client was refused, as a share of what it sent, and its wall time
// against the least the windows allow.
for (const sc of scenarios.map(scenarioById).filter((s) => s.window)) {
  const floorMs = windowFloorMs(sc.run?.tiles ?? tiles, sc.window);
  process.stderr.write(`${sc.id}: the windows' floor is ${(floorMs / 1000).toFixed(1)} s\n`);
  for (const r of runs.filter((x) => x.scenario === sc.id)) {
    const share = (100 * r.refused) / Math.max(1, r.requests);
    process.stderr.write(
      `  ${r.client.padEnd(20)} ${r.refused} × 429 of ${r.requests} requests (${share.toFixed(1)} %), ` +
        `${r.correct}/${r.tiles} correct in ${(r.wallMs / 1000).toFixed(2)} s (${(r.wallMs / floorMs).toFixed(2)} × the floor)\n`,
    );
  }
}
process.stderr.write(`fault benchmark: ${(totalMs / 1000).toFixed(0)} s\n`);
process.stderr.write(`reproduce: node bench/fault.mjs --tiles ${tiles} --clients ${clients.join(",")} --scenarios ${scenarios.join(",")}\n`);
