#!/usr/bin/env node
// Several runs of the map-view bench taken as one: a healthy set-up's median of paired steps moves
// from run to run by more than a target's margin, so a verdict on one run can fall either side.
// Pairs stay within their run (a round's own loader and adapter ran side by side); the rounds of
// every run are pooled, and the interval is the bootstrap over those rounds (bench/stats.mjs).
//
//   node bench/pool-mapview.mjs bench/out/mapview-mapproxy.json runs/mapview-mapproxy-2.json …
//
// Each file a bench/mapview.mjs output of the same script (copy each run's output aside before the
// next overwrites it). Prints per library: each run's median of paired steps, the pooled one and
// its interval, and each step's pooled median.
import fs from "node:fs";
import { fileURLToPath } from "node:url";
import { bootstrapMedianInterval, median } from "./stats.mjs";
import { ratio } from "./markdown.mjs";
import { pairedSteps, stepNames } from "./report-mapview.mjs";

/**
 * The runs of `outputs` (bench/mapview.mjs outputs) as one output: each run's round numbered
 * apart from every other output's, so that rounds pair only within their own run. Throws when
 * the outputs ran different scripts or set-ups: their steps would not compare.
 */
export function pooled(outputs) {
  if (outputs.length === 0) throw new Error("pool-mapview: no output given");
  const [first] = outputs;
  if (outputs.some((o) => JSON.stringify(o.script) !== JSON.stringify(first.script))) throw new Error("pool-mapview: the outputs ran different scripts");
  const setUp = (o) => [o.server ?? "public", o.protocol ?? "h1", o.viewport ?? "768x512", o.platformLoader ?? null, o.cpuProfile === true].join(" ");
  if (outputs.some((o) => setUp(o) !== setUp(first))) {
    throw new Error("pool-mapview: the outputs ran different set-ups (server, protocol, viewport, platform arm or CPU profile)");
  }
  const width = 1 + Math.max(...outputs.flatMap((o) => o.runs.map((r) => r.round)));
  return { ...first, runs: outputs.flatMap((o, k) => o.runs.map((r) => ({ ...r, round: r.round + k * width }))) };
}

/** Per library of `outputs`: each run's median of paired steps, the pooled one, its interval and each step's. */
export function poolLines(outputs) {
  const all = pooled(outputs);
  const names = stepNames(all);
  const lines = [];
  for (const lib of new Set(all.runs.filter((r) => r.scenario === "ok").map((r) => r.lib))) {
    const p = pairedSteps(all, lib);
    if (p.all === null || p.all === undefined) continue;
    const perRun = outputs.map((o) => pairedSteps(o, lib).all).filter((v) => v != null);
    const range = bootstrapMedianInterval(p.rounds.map((r) => r.all));
    const steps = p.steps.map((s, i) => `${names[i]} ${ratio(s.ratios.length ? median(s.ratios) : null)}`).join(", ");
    lines.push(
      `${lib}: ${perRun.length} runs (${perRun.map((v) => v.toFixed(3)).join(", ")}); pooled, ${p.rounds.length} rounds: ` +
        `median of paired steps ${p.all.toFixed(3)} (95 % ${range[0].toFixed(3)}–${range[1].toFixed(3)}); per step ${steps}`,
    );
  }
  return lines;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const files = process.argv.slice(2);
  if (files.length === 0) {
    process.stderr.write("usage: node bench/pool-mapview.mjs OUTPUT.json OUTPUT.json … (bench/mapview.mjs outputs of one set-up)\n");
    process.exit(2);
  }
  const lines = poolLines(files.map((f) => JSON.parse(fs.readFileSync(f, "utf8"))));
  process.stdout.write(`${lines.join("\n")}\nreproduce: node bench/pool-mapview.mjs ${files.join(" ")}\n`);
}
