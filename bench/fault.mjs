#!/usr/bin/env node
// The fault benchmark: every client × every scenario (bench/fault-run.mjs, one process each),
// at most two runs busy on the CPU at once (bench/cpu-pool.mjs). Writes bench/out/fault.json.
//
//   node bench/fault.mjs [--tiles 400] [--clients a,b] [--scenarios x,y]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { CLIENTS } from "./clients/index.mjs";
import { SCENARIOS, scenarioById } from "./scenarios.mjs";
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
        `  ${scenario.padEnd(18)} ${client.padEnd(20)} ${run.correct} correct, ${run.wrong} wrong, ` +
          `${run.failed} failed, ${run.requests} requests, ${(run.wallMs / 1000).toFixed(1)} s\n`,
      );
    },
  })),
);
process.stderr.write(`fault benchmark: ${jobs.length} runs of ${tiles} tiles\n`);
await runPool(jobs);
const totalMs = performance.now() - t0;
fs.mkdirSync(path.join(HERE, "out"), { recursive: true });
fs.writeFileSync(path.join(HERE, "out/fault.json"), JSON.stringify({ tiles, concurrency: 32, deadlineMs: 6000, totalMs, runs }, null, 1));
process.stderr.write(`fault benchmark: ${(totalMs / 1000).toFixed(0)} s\n`);
