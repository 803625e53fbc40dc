#!/usr/bin/env node
// Writes bench/RESULTS.md (and bench/outage-requests.svg, bench/mapview-holes.svg) from what the
// benches left in bench/out/: fault.json, mapview*.json, request-start.json, overhead.json, size.json, startup.json,
// soak.json, jitter.md, fuzz.md, phases.tsv. Every figure comes from those files; every "loses" line is computed here.
//
//   node bench/report.mjs
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { CLIENTS, isTilefetch } from "./clients/index.mjs";
import { summarise } from "./overhead-rounds.mjs";
import { BEFORE_COMMIT, BEFORE_ID, BEFORE_LABEL, beforeSizeLine } from "./before/id.mjs";
import { FLOOR_ID, FLOOR_LABEL } from "./floor/id.mjs";
import { SCENARIOS, windowFloorMs } from "./scenarios.mjs";
import { slowUpstreamSection } from "./report-slow-upstream.mjs";
import { pmtilesSection } from "./report-pmtiles.mjs";
import { sessionSection } from "./report-mapview-session.mjs";
import { politenessSection } from "./report-politeness.mjs";
import { installedVersion, anchorClients, HERE, ROOT, OUT } from "./bundle.mjs";
import { outagePlot } from "./svg.mjs";
import { mapviewSection } from "./report-mapview.mjs";
import { fastServerSection } from "./report-mapview-fast.mjs";
import { setupsSection } from "./report-mapview-setups.mjs";
import { edgeSection } from "./report-edge.mjs";
import { soakVerdicts } from "./soak.mjs";
import { int, table } from "./markdown.mjs";

const COMMAND = "bash scripts/bench.sh";
// The "boundary" issue's targets: wall time against raw fetch per platform, and CPU per call
// within `cpuOverWrapperUs` of the plain JS wrapper's (bench/clients/plain-wrapper.mjs).
const OVERHEAD_TARGET = { ratio: { node: 1.05, chromium: 1.03 }, cpuOverWrapperUs: 20, wrapper: "plain-wrapper" };
const TILEFETCH_IDS = Object.keys(CLIENTS).filter(isTilefetch);
const label = (id) => (id === FLOOR_ID ? FLOOR_LABEL : id === BEFORE_ID ? BEFORE_LABEL : CLIENTS[id].label);

const readJson = (name) => {
  const file = path.join(OUT, name);
  return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : null;
};
const readText = (name) => {
  const file = path.join(OUT, name);
  return fs.existsSync(file) ? fs.readFileSync(file, "utf8").trim() : null;
};
const tryRun = (cmd, args) => {
  try {
    return execFileSync(cmd, args, { cwd: ROOT, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return null;
  }
};

// ------------------------------------------------------------------ formatting
const fixed = (n, d) => (n == null ? "—" : n.toFixed(d));
const kb = (b) => `${(b / 1024).toFixed(1)} KB`;

// ------------------------------------------------------------------ "loses" bookkeeping
// Per section, the figures on which some other client beats tilefetch's fetchTile or TileClient:
// tilefetch's values, the best other client's, and how many others are better too.
const losses = new Map(); // section -> [line]
const lose = (section, text) => {
  if (!losses.has(section)) losses.set(section, []);
  losses.get(section).push(text);
};
/** `better(a, b)`: a strictly better than b; null is the worst value. */
function compare(section, figure, values, better, show) {
  const mine = TILEFETCH_IDS.filter((tf) => tf in values);
  const others = Object.entries(values).filter(([id, v]) => !isTilefetch(id) && v != null);
  const beaten = mine.filter((tf) => others.some(([, v]) => values[tf] == null || better(v, values[tf])));
  if (beaten.length === 0) return;
  others.sort((a, b) => (better(a[1], b[1]) ? -1 : better(b[1], a[1]) ? 1 : 0));
  const [bestId, best] = others[0];
  const worstMine = mine.reduce((w, tf) => (w == null || better(values[w], values[tf]) ? tf : w), null);
  const n = others.filter(([, v]) => values[worstMine] == null || better(v, values[worstMine])).length;
  lose(
    section,
    `${figure}: ${mine.map((tf) => `${label(tf)} ${show(values[tf])}`).join(", ")}; ` +
      `best: ${label(bestId)} ${show(best)}${n > 1 ? ` (${n} clients better)` : ""}`,
  );
}
const higher = (a, b) => a > b;
const lower = (a, b) => a < b;

const md = [];
const now = new Date();

// ------------------------------------------------------------------ header
const cpuModel = (fs.readFileSync("/proc/cpuinfo", "utf8").match(/^model name\s*:\s*(.+)$/m) ?? [])[1] ?? os.cpus()[0]?.model ?? "unknown";
const overhead = readJson("overhead.json");
const chromiumVersion = overhead?.chromium?.version ?? tryRun("/usr/bin/chromium", ["--version"]);
const commit = tryRun("git", ["rev-parse", "--short", "HEAD"]);
// The bench's own outputs are rewritten by every run: they do not make the measured code "dirty".
const dirty = tryRun("git", [
  "status",
  "--porcelain",
  "--untracked-files=no",
  "--",
  ".",
  ":!bench/RESULTS.md",
  ":!bench/outage-requests.svg",
  ":!bench/mapview-holes.svg",
]);
const tilefetchVersion = JSON.parse(fs.readFileSync(path.join(ROOT, "pkg/package.json"), "utf8")).version;

md.push("# tilefetch benchmarks");
md.push("");
md.push(`Reproduce: \`${COMMAND}\`. This file is generated by`);
md.push("`bench/report.mjs` from the runs' raw output in `bench/out/`: do not edit it by hand.");
md.push("");
md.push(
  table(
    ["", ""],
    [
      ["generated", now.toISOString().replace(/\.\d+Z$/, "Z")],
      ["machine", `${cpuModel}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, ${os.type()} ${os.release()}`],
      ["Node", process.version],
      ["Chromium", chromiumVersion ?? "not found"],
      ["rustc", tryRun("rustc", ["--version"]) ?? "not found"],
      ["tilefetch", `${tilefetchVersion} (pkg/), commit ${commit ?? "?"}${dirty ? " + uncommitted changes" : ""}`],
      ...anchorClients().map((id) => [CLIENTS[id].anchor, `${installedVersion(CLIENTS[id].anchor)} (exact devDependency)`]),
    ],
  ),
);
md.push("");
md.push("Anchor versions: the newest release of each whose `engines` include the Node above (ky 2, p-retry 8+ and");
md.push("cockatiel 4 require Node ≥ 22).");
md.push("");
const phases = readText("phases.tsv");
if (phases) {
  const rows = phases.split("\n").map((l) => l.split("\t"));
  const total = rows.reduce((a, [, s]) => a + Number(s), 0);
  md.push(`Run time of \`${COMMAND}\`: ${(total / 60).toFixed(1)} min (${rows.map(([n, s]) => `${n} ${s} s`).join(", ")}).`);
  md.push("");
}

md.push("## Clients and their configuration");
md.push("");
md.push("Each is configured as its own documentation recommends for retries; the adapter and a comment citing");
md.push("the docs are in `bench/clients/<id>.mjs`.");
md.push("");
md.push(
  table(
    ["client", "configuration"],
    Object.entries(CLIENTS).map(([id, c]) => [`${c.label} (\`${id}\`)`, c.config]),
  ),
);
md.push("");

md.push("<!-- LOSSES -->");
md.push("");

// ------------------------------------------------------------------ fault benchmark
const fault = readJson("fault.json");
md.push("## Fault benchmark (Node, loopback)");
md.push("");
if (!fault) {
  md.push("Not run (bench/out/fault.json is missing).");
} else {
  md.push(`${fault.tiles} distinct tiles per run, ${fault.concurrency} at a time, each under a ${fault.deadlineMs / 1000} s deadline that the`);
  md.push("harness enforces with an AbortSignal; one process and one fresh fault server (`tests/server/fault-server.mjs`,");
  md.push("seed 7) per client × scenario, at most two runs busy on the CPU at once (`bench/cpu-pool.mjs`). All");
  md.push(`${fault.runs.length} runs took ${(fault.totalMs / 1000).toFixed(0)} s. Columns:`);
  md.push("");
  md.push("- **correct**: bytes equal the server's truth (`tilePng`), delivered before the deadline; **wrong**: an error");
  md.push("  body (XML, HTML, half a PNG) delivered as a tile; **failed**: rejected; **late**: delivered after the deadline");
  md.push("  (useless to a map); **unsettled**: still pending 30 s after the last deadline.");
  md.push("- **req/tile**: requests the server received per tile (amplification); **perm. extra**: requests to");
  md.push("  permanent-failure tiles beyond the first; **p50/p95/p99**: latency of the correct tiles, ms; **wall**:");
  md.push("  until every tile was settled or past its deadline; **peak**: most requests received in one 100 ms.");
  md.push("");
  const ids = Object.keys(CLIENTS);
  for (const sc of SCENARIOS) {
    const runs = Object.fromEntries(fault.runs.filter((r) => r.scenario === sc.id).map((r) => [r.client, r]));
    if (Object.keys(runs).length === 0) continue;
    md.push(`### ${sc.title}`);
    md.push("");
    md.push(
      `Server parameters: \`${new URLSearchParams(sc.params).toString() || "(none)"}\`${sc.outage ? `; outage(${sc.outage.ms} ms) at ${sc.outage.atMs} ms` : ""}.`,
    );
    const own = Object.values(runs)[0];
    if (sc.run) md.push(`This scenario's runs: ${own.tiles} tiles, ${own.concurrency} at a time, each under a ${own.deadlineMs / 1000} s deadline.`);
    md.push("");
    const head = ["client", "correct", "wrong", "failed", "late", "unsettled", "req/tile", "perm. extra", "p50", "p95", "p99", "wall s", "peak/100 ms"];
    md.push(
      table(
        head,
        ids
          .filter((id) => runs[id])
          .map((id) => {
            const r = runs[id];
            const name = isTilefetch(id) ? `**${label(id)}**` : label(id);
            return [
              name,
              r.correct,
              r.wrong,
              r.failed,
              r.late,
              r.unsettled,
              fixed(r.requestsPerTile, 2),
              r.permanentExtra ?? "—",
              int(r.latencyMs.p50),
              int(r.latencyMs.p95),
              int(r.latencyMs.p99),
              fixed(r.wallMs / 1000, 1),
              r.peakPer100ms,
            ];
          }),
      ),
    );
    md.push("");
    const reasons = ids
      .filter((id) => runs[id] && Object.keys(runs[id].reasons).length)
      .map(
        (id) =>
          `${label(id)}: ${Object.entries(runs[id].reasons)
            .sort((a, b) => b[1] - a[1])
            .map(([k, n]) => `${n} ${k.replace(/\|/g, "/")}`)
            .join(", ")}`,
      );
    if (reasons.length) md.push(`<details><summary>why calls failed</summary>\n\n${reasons.map((r) => `- ${r}`).join("\n")}\n\n</details>\n`);
    if (sc.pacing) {
      // The pacing limit: a client that never overflows the bucket delivers 95 % of the tiles
      // after (0.95·N − burst) / rate seconds; the target is 1.3× that.
      const limitMs = ((Math.ceil(0.95 * fault.tiles) - sc.pacing.burst) / sc.pacing.rate) * 1000;
      const cells = ids.filter((id) => runs[id]).map((id) => `${label(id)} ${runs[id].msTo95 == null ? "never" : `${fixed(runs[id].msTo95 / 1000, 2)} s`}`);
      md.push(`Time to 95 % of the tiles correct, from the start: ${cells.join(", ")}. A perfectly paced client: ${fixed(limitMs / 1000, 2)} s.`);
      md.push("");
      for (const tf of TILEFETCH_IDS.filter((id) => runs[id])) {
        const t = runs[tf].msTo95;
        if (t == null || t > 1.3 * limitMs) {
          lose(
            `fault: ${sc.title}`,
            `**target missed**: ${label(tf)} 95 % of the tiles after ${t == null ? "never" : `${fixed(t / 1000, 2)} s`} (target ≤ 1.3 × ${fixed(limitMs / 1000, 2)} s)`,
          );
        }
      }
    }

    if (sc.stated) {
      // The stated quota: 429s received (a share of the requests) and the stated rate used.
      const cells = ids
        .filter((id) => runs[id])
        .map((id) => {
          const r = runs[id];
          // Only of a client that wanted the whole quota: one that gave up served a burst and left.
          const use = r.servedPerSecond == null || r.msTo95 == null ? "— (not 95 % of the tiles)" : `${fixed((100 * r.servedPerSecond) / sc.pacing.rate, 0)} %`;
          return `${label(id)} ${r.refused} × 429 (${fixed((100 * r.refused) / Math.max(1, r.requests), 1)} % of ${r.requests}), rate used ${use}`;
        });
      md.push(`429s received and the stated rate used (served requests per second while busy, over ${sc.pacing.rate}/s): ${cells.join("; ")}.`);
      md.push("");
      for (const tf of TILEFETCH_IDS.filter((id) => runs[id])) {
        const r = runs[tf];
        const use = r.servedPerSecond == null ? 0 : r.servedPerSecond / sc.pacing.rate;
        if (r.refused > 0.01 * r.requests || use < 0.9) {
          lose(
            `fault: ${sc.title}`,
            `**target missed**: ${label(tf)} ${r.refused} × 429 of ${r.requests} requests, ${fixed(100 * use, 0)} % of the stated rate (targets ≤ 1 %, ≥ 90 %)`,
          );
        }
      }
    }

    if (sc.window) {
      // A fixed window: the tiles need ceil(N / q) windows, the last of which opens after the
      // others; the targets are ≤ 1 % 429s and a wall within 1.1 × ky's and 1.1 × that floor.
      const floorMs = windowFloorMs(own.tiles, sc.window);
      const cells = ids
        .filter((id) => runs[id])
        .map((id) => {
          const r = runs[id];
          return `${label(id)} ${r.refused} × 429 (${fixed((100 * r.refused) / Math.max(1, r.requests), 1)} % of ${r.requests}), ${r.correct} correct in ${fixed(r.wallMs / 1000, 2)} s`;
        });
      md.push(`429s received and the wall time: ${cells.join("; ")}. The windows' floor: ${fixed(floorMs / 1000, 1)} s.`);
      md.push("");
      const ky = Object.keys(runs).find((id) => CLIENTS[id].anchor === "ky");
      for (const tf of TILEFETCH_IDS.filter((id) => runs[id])) {
        const r = runs[tf];
        const kyWall = ky ? runs[ky].wallMs : Number.POSITIVE_INFINITY;
        if (r.correct < own.tiles || r.refused > 0.01 * r.requests || r.wallMs > 1.1 * kyWall || r.wallMs > 1.1 * floorMs) {
          lose(
            `fault: ${sc.title}`,
            `**target missed**: ${label(tf)} ${r.correct} correct, ${r.refused} × 429 of ${r.requests} requests, ${fixed(r.wallMs / 1000, 2)} s (targets: every tile, ≤ 1 %, ≤ 1.1 × ky's ${fixed(kyWall / 1000, 2)} s and 1.1 × the floor ${fixed(floorMs / 1000, 1)} s)`,
          );
        }
      }
    }

    const vals = (f) => Object.fromEntries(Object.entries(runs).map(([id, r]) => [id, f(r)]));
    const where = `fault: ${sc.title}`;
    compare(
      where,
      "correct tiles",
      vals((r) => r.correct),
      higher,
      String,
    );
    compare(
      where,
      "wrong deliveries",
      vals((r) => r.wrong),
      lower,
      String,
    );
    compare(
      where,
      "failed",
      vals((r) => r.failed),
      lower,
      String,
    );
    compare(
      where,
      "late",
      vals((r) => r.late),
      lower,
      String,
    );
    compare(
      where,
      "requests per tile",
      vals((r) => r.requestsPerTile),
      lower,
      (v) => fixed(v, 2),
    );
    if (sc.permanent)
      compare(
        where,
        "requests to permanent failures beyond the first",
        vals((r) => r.permanentExtra),
        lower,
        String,
      );
    for (const q of ["p50", "p95", "p99"])
      compare(
        where,
        `${q} latency of correct tiles`,
        vals((r) => r.latencyMs[q]),
        lower,
        (v) => `${int(v)} ms`,
      );
    compare(
      where,
      "wall time",
      vals((r) => r.wallMs),
      lower,
      (v) => `${fixed(v / 1000, 1)} s`,
    );
    compare(
      where,
      "peak requests per 100 ms",
      vals((r) => r.peakPer100ms),
      lower,
      String,
    );
    // The tail target: tilefetch's p95 of correct tiles ≤ that of every other client that
    // delivers at least as many correct tiles with no more requests per tile (one that gave up on
    // the hard tiles, or bought its p95 with more load, is no comparison).
    for (const tf of TILEFETCH_IDS.filter((id) => runs[id])) {
      const mine = runs[tf];
      const comparable = ids.filter(
        (id) =>
          !isTilefetch(id) &&
          runs[id] &&
          runs[id].correct >= mine.correct &&
          runs[id].requestsPerTile <= mine.requestsPerTile &&
          runs[id].latencyMs.p95 != null,
      );
      const better = comparable.filter((id) => mine.latencyMs.p95 == null || runs[id].latencyMs.p95 < mine.latencyMs.p95);
      if (better.length) {
        const best = better.reduce((a, b) => (runs[a].latencyMs.p95 <= runs[b].latencyMs.p95 ? a : b));
        lose(
          where,
          `**target missed**: ${label(tf)} p95 ${int(mine.latencyMs.p95)} ms against ${label(best)}'s ${int(runs[best].latencyMs.p95)} ms, ` +
            `which delivers ${runs[best].correct} correct tiles (≥ ${mine.correct}) at ${fixed(runs[best].requestsPerTile, 2)} requests per tile (≤ ${fixed(mine.requestsPerTile, 2)})`,
        );
      }
    }

    if (sc.outage) {
      const w = Object.values(runs).find((r) => r.outage?.window)?.outage.window;
      md.push(`During the outage (${sc.outage.ms / 1000} s, from ${sc.outage.atMs} ms): requests the server received, and how long after`);
      md.push('its end until 95 % of the tiles were delivered correctly ("never": that many never were).');
      md.push("");
      md.push(
        table(
          ["client", "requests during", "per second", "peak/100 ms during", "to 95 % after the outage"],
          ids
            .filter((id) => runs[id])
            .map((id) => {
              const o = runs[id].outage;
              return [
                isTilefetch(id) ? `**${label(id)}**` : label(id),
                o.requestsDuring,
                fixed(o.requestsPerSecondDuring, 1),
                o.peakPer100msDuring,
                o.msTo95AfterOutage == null ? `never (${runs[id].correct} correct)` : `${fixed(o.msTo95AfterOutage / 1000, 2)} s`,
              ];
            }),
        ),
      );
      md.push("");
      compare(
        where,
        "requests during the outage",
        vals((r) => r.outage.requestsDuring),
        lower,
        String,
      );
      compare(
        where,
        "time to 95 % after the outage",
        vals((r) => r.outage.msTo95AfterOutage),
        lower,
        (v) => (v == null ? "never" : `${fixed(v / 1000, 2)} s`),
      );
      // The recovery target ("tail" issue): 95 % of the tiles no later after the outage than the
      // best other client that delivers as many.
      for (const tf of TILEFETCH_IDS.filter((id) => runs[id])) {
        const mine = runs[tf].outage.msTo95AfterOutage;
        const others = ids.filter((id) => !isTilefetch(id) && runs[id]?.outage.msTo95AfterOutage != null && runs[id].correct >= runs[tf].correct);
        const best = others.reduce((a, b) => (a && runs[a].outage.msTo95AfterOutage <= runs[b].outage.msTo95AfterOutage ? a : b), null);
        if (best && (mine == null || mine > runs[best].outage.msTo95AfterOutage)) {
          lose(
            where,
            `**target missed**: ${label(tf)} 95 % of the tiles ${mine == null ? "never" : `${fixed(mine / 1000, 2)} s`} after the outage, against ${label(best)}'s ${fixed(runs[best].outage.msTo95AfterOutage / 1000, 2)} s`,
          );
        }
      }
      if (sc.id === "outage") {
        const series = ids.filter((id) => runs[id]).map((id) => ({ label: label(id), per100ms: runs[id].outage.per100ms }));
        fs.writeFileSync(path.join(HERE, "outage-requests.svg"), outagePlot(series, w, { title: `Requests per 100 ms, ${sc.title}` }));
        md.push("![requests per 100 ms during the outage, per client](outage-requests.svg)");
        md.push("");
      }
    }
  }
  md.push(...politenessSection(fault, lose));
}

// ------------------------------------------------------------------ map view
{
  const { md: lines, svg } = mapviewSection(readJson("mapview.json"), lose);
  md.push(...lines);
  if (svg) fs.writeFileSync(path.join(HERE, "mapview-holes.svg"), svg);
}

// ------------------------------------------------------------------ map view, fast server
{
  const readHistory = (name) => {
    try {
      return JSON.parse(fs.readFileSync(path.join(HERE, "history", name), "utf8"));
    } catch {
      return null;
    }
  };
  md.push(
    ...fastServerSection(
      {
        fast: readJson("mapview-fast.json"),
        returning: readJson("mapview-fast-returning.json"),
        mapproxy: readJson("mapview-mapproxy.json"),
        before: readHistory("mapview-fast-before.json"),
        phases: readJson("mapview-phases.json"),
        phasesBefore: readHistory("mapview-phases-before.json"),
        requestStart: readJson("request-start.json"),
        platform: { fetch: readJson("mapview-mapproxy-platform-fetch.json"), worker: readJson("mapview-mapproxy-platform-worker.json") },
      },
      lose,
    ),
  );
}

// ------------------------------------------------------------------ map view over HTTP/2, full screen
md.push(
  ...setupsSection(["mapview-1792x1024.json", "mapview-h2.json", "mapview-h2-1792x1024.json"].map(readJson), lose, readJson("mapview-phases-public-h2.json"), {
    fetch: readJson("mapview-h2-1792x1024-platform-fetch.json"),
    worker: readJson("mapview-h2-1792x1024-platform-worker.json"),
  }),
);
md.push(...sessionSection(readJson("mapview-session.json"), lose));

// ------------------------------------------------------------------ edge scale
md.push(...edgeSection(readJson("edge.json"), lose));
md.push(...slowUpstreamSection(readJson("slow-upstream.json"), lose));
md.push(...pmtilesSection(readJson("pmtiles.json"), lose));

// ------------------------------------------------------------------ overhead
md.push("## Overhead (healthy scenario)");
md.push("");
if (!overhead) {
  md.push("Not run (bench/out/overhead.json is missing).");
} else {
  md.push(`Every client fetches the same healthy tiles (${overhead.concurrency} at a time) from the fault server in a process of`);
  md.push(`its own, in measured rounds after ${overhead.warmup} of warm-up, the clients taking turns, each round starting one`);
  md.push("client further along. Ratio and per-call overhead are medians of the per-round comparison with raw fetch in the same");
  md.push("round; CPU is `process.cpuUsage()` of the client process (Node only). Chromium allows 6 connections per host,");
  md.push(
    `so its batches are network-bound. Targets (the "boundary" issue): wall time ≤ ${OVERHEAD_TARGET.ratio.node}× raw fetch in Node and ≤ ${OVERHEAD_TARGET.ratio.chromium}× in Chromium; CPU per call ≤ the ${label(OVERHEAD_TARGET.wrapper)}'s + ${OVERHEAD_TARGET.cpuOverWrapperUs} µs.`,
  );
  md.push("");
  if (overhead.node?.summary?.[FLOOR_ID] || overhead.node?.samples?.[FLOOR_ID]) {
    md.push(`In Node, the ${label(FLOOR_ID)} is the ${label(OVERHEAD_TARGET.wrapper)} with its \`fetch\`, two header reads and body read`);
    md.push("moved into a wasm-bindgen async function (`bench/floor/`): one minimal wasm design, with wasm-bindgen's defaults");
    md.push("(reference types on), opt-level 3 and wasm-bindgen-futures' executor. What it costs over the wrapper is what making a");
    md.push("call's fetch from wasm costs on this platform before any work of a library's own; tilefetch's build differs (opt-level");
    md.push('"z", no reference types, its own executor: ARCHITECTURE.md), and that difference is part of its figures.');
    md.push("");
  }
  for (const platform of ["node", "chromium"]) {
    const p = overhead[platform];
    if (!p) continue;
    // From the rounds themselves, so that the summary is what overhead-rounds.mjs computes now.
    const s = summarise(p.samples, { tiles: p.tiles });
    const cpu = platform === "node";
    md.push(`### ${platform === "node" ? `Node ${process.version}` : `Chromium ${p.version}`}: ${p.tiles} tiles per batch, ${p.rounds} rounds`);
    md.push("");
    const head = [
      "client",
      "median wall ms / batch",
      "× raw fetch",
      "per-round × range",
      "µs per call over raw fetch",
      ...(cpu ? ["CPU µs per call", "CPU µs over raw fetch", `CPU µs over the ${label(OVERHEAD_TARGET.wrapper)}`] : []),
    ];
    // Paired within rounds (bench/overhead-rounds.mjs), as the column against raw fetch is.
    const overWrapper = (id) => s[id].extraCpuOverReferenceUsPerCall;
    md.push(
      table(
        head,
        Object.keys(s).map((id) => [
          isTilefetch(id) ? `**${label(id)}**` : label(id),
          fixed(s[id].wallMs, 1),
          fixed(s[id].ratio, 3),
          `${fixed(s[id].ratioRange[0], 2)}–${fixed(s[id].ratioRange[1], 2)}`,
          fixed(s[id].overheadUsPerCall, 1),
          ...(cpu ? [fixed(s[id].cpuUsPerCall, 1), fixed(s[id].extraCpuUsPerCall, 1), overWrapper(id) == null ? "–" : fixed(overWrapper(id), 1)] : []),
        ]),
      ),
    );
    md.push("");
    const where = `overhead (${platform === "node" ? "Node" : "Chromium"})`;
    const vals = (f) => Object.fromEntries(Object.entries(s).map(([id, v]) => [id, f(v)]));
    compare(
      where,
      "wall time × raw fetch",
      vals((v) => v.ratio),
      lower,
      (v) => `${fixed(v, 3)}×`,
    );
    if (cpu)
      compare(
        where,
        "CPU µs per call",
        vals((v) => v.cpuUsPerCall),
        lower,
        (v) => `${fixed(v, 1)} µs`,
      );
    for (const tf of TILEFETCH_IDS) {
      if (!s[tf]) continue;
      const misses = [];
      const ratio = OVERHEAD_TARGET.ratio[platform];
      if (s[tf].ratio > ratio) misses.push(`wall time ${fixed(s[tf].ratio, 3)}× raw fetch (target ≤ ${ratio}×)`);
      if (cpu && overWrapper(tf) == null) misses.push(`CPU not compared: no ${label(OVERHEAD_TARGET.wrapper)} row in this run`);
      else if (cpu && overWrapper(tf) > OVERHEAD_TARGET.cpuOverWrapperUs)
        misses.push(
          `${fixed(overWrapper(tf), 1)} µs CPU per call over the ${label(OVERHEAD_TARGET.wrapper)} (target ≤ ${OVERHEAD_TARGET.cpuOverWrapperUs} µs)`,
        );
      // What a fetch from wasm costs with no work of tilefetch's own (Node only).
      const floor = s[FLOOR_ID] ? `; the ${label(FLOOR_ID)} alone: ${fixed(s[FLOOR_ID].ratio, 3)}×, ${fixed(overWrapper(FLOOR_ID), 1)} µs` : "";
      if (misses.length) lose(where, `**target missed**: ${label(tf)} ${misses.join("; ")}${floor}`);
    }
  }
}

// ------------------------------------------------------------------ profile
const profile = readJson("profile.json");
md.push("## Where a call's time goes (Node, V8 sampling profiler)");
md.push("");
if (!profile) {
  md.push("Not run (bench/out/profile.json is missing).");
} else {
  /**
   * One platform's breakdown: raw fetch, the wrapper, fetchTile and the two differences; with
   * tilefetch at the boundary issue's start (bench/before/) when it was profiled, its column and
   * what changed since.
   */
  const breakdown = (clients) => {
    const [raw, wrapper, tf, before] = ["raw-fetch", OVERHEAD_TARGET.wrapper, "tilefetch-fetchtile", BEFORE_ID].map((id) => clients[id]);
    const cell = (v) => (Number.isNaN(v) ? "–" : fixed(v, 1));
    const row = (name, of, bold = false) => {
      const b = (text) => (bold ? `**${text}**` : text);
      const v = (c) => (c ? of(c) : NaN);
      return [
        name,
        cell(v(raw)),
        cell(v(wrapper)),
        ...(before ? [cell(v(before))] : []),
        cell(v(tf)),
        b(cell(v(tf) - v(raw))),
        b(cell(v(tf) - v(wrapper))),
        ...(before ? [b(cell(v(tf) - v(before)))] : []),
      ];
    };
    const rows = Object.keys(tf.usPerCall).map((name) => row(name, (c) => c.usPerCall[name]));
    rows.push(row("**busy, all of it**", (c) => c.busyUsPerCall, true));
    rows.push(row("wall time per call (÷ concurrency: throughput)", (c) => c.wallMsPerCall * 1000));
    return table(
      [
        "where (self time, µs per call)",
        "raw fetch",
        label(OVERHEAD_TARGET.wrapper),
        ...(before ? [label(BEFORE_ID)] : []),
        "tilefetch fetchTile",
        "over raw fetch",
        "over the wrapper",
        ...(before ? [`now − before`] : []),
      ],
      rows,
    );
  };
  const wrapperRun = profile.clients[OVERHEAD_TARGET.wrapper];
  const clientsRun = wrapperRun ? `raw fetch, the ${label(OVERHEAD_TARGET.wrapper)} and \`fetchTile\`` : "raw fetch and `fetchTile`";
  md.push(`\`node bench/profile.mjs\`: ${clientsRun} each fetch ${int(profile.tiles)} healthy tiles, ${profile.concurrency} at a time, from the`);
  md.push("loopback fault server (its own process), under V8's sampling profiler (100 µs) in a process of their own; each sample's");
  md.push(`self time goes to where its code lives. Per call, medians of ${profile.rounds} rounds, ${profile.node}. Idle time is left out; the`);
  md.push("differences are what a call through tilefetch costs the CPU on top of raw fetch and of the wrapper, and where.");
  if (profile.clients[BEFORE_ID]) {
    md.push(`Before and after: ${label(BEFORE_ID)} is the module as it was when the "boundary" issue was filed (commit ${BEFORE_COMMIT},`);
    md.push("built from the repository's history with today's toolchain by `bench/before/build.sh`), profiled in the same rounds.");
    md.push('"now − before" is everything that changed since, not the boundary work alone: hedging, learned rates, OGC exception');
    md.push(`reports on any status and the User-Agent came after it.${beforeSizeLine() ? ` Its build printed: \`${beforeSizeLine()}\`.` : ""}`);
  }
  md.push("");
  md.push(breakdown(profile.clients));
  if (profile.chromium) {
    const c = profile.chromium;
    md.push("");
    md.push(`### Chromium ${c.version}`);
    md.push("");
    md.push(`The same clients in headless Chromium, each in a fresh page after 400 tiles of warm-up, ${int(c.tiles)} tiles`);
    md.push("16 at a time under the same profiler (DevTools protocol). fetch's own work runs in the browser's network process;");
    md.push(`the page's part of it is the built-ins it calls, each its own row. Per call, medians of ${c.rounds ?? profile.rounds} rounds. Part of what a`);
    md.push("built-in costs shows as the self time of the JS function that called it: for raw fetch and the wrapper that is their");
    md.push("`get` (the harness row), for fetchTile the glue's `fetchWhole`, which calls fetch and reads the response.");
    md.push("");
    md.push(breakdown(c.clients));
  }
}
md.push("");
md.push(...ownWorkSection(readJson("own-work.json"), readJson("overhead.json")));
md.push(...ownWorkChromiumSection(readJson("own-work-chromium.json")));
md.push(...crossingsSection(readJson("crossings.json")));

// ------------------------------------------------------------------ size
const size = readJson("size.json");
md.push("## Size (gzip -9)");
md.push("");
if (!size) {
  md.push("Not run (bench/out/size.json is missing).");
} else {
  const c = size.core;
  md.push('What a browser downloads for `import { fetchTile } from "tilefetch"` (the glue as `scripts/build.sh` counts it:');
  md.push(`${c.glueFiles.map((f) => `\`${f}\``).join(", ")}), each adapter on top of it, and each anchor as its adapter imports it, bundled`);
  md.push("and minified by rolldown; all through `gzip -9`.");
  md.push("");
  md.push(
    table(
      ["what", "raw B", "gzip -9 B"],
      [
        ["**tilefetch** wasm (`pkg/gen/tilefetch_bg.wasm`)", int(c.wasmRaw), int(c.wasmGzip)],
        ["**tilefetch** JS glue (minified)", int(c.glueRaw), int(c.glueGzip)],
        ["**tilefetch total**", int(c.wasmRaw + c.glueRaw), `**${int(c.totalGzip)}** (${kb(c.totalGzip)})`],
      ],
    ),
  );
  md.push("");
  md.push(
    table(
      ["adapter (on top of the core)", "files", "as shipped: raw B", "gzip -9 B", "minified (rolldown): B", "gzip -9 B"],
      Object.entries(size.adapters).map(([name, a]) => [`tilefetch/${name}`, a.files.length, int(a.raw), int(a.gzip), int(a.minified), int(a.minifiedGzip)]),
    ),
  );
  md.push("");
  md.push(
    table(
      ["anchor", "version", "minified B", "minified + gzip -9 B", "tilefetch core ÷ anchor"],
      Object.entries(size.anchors).map(([name, a]) => [name, a.version, int(a.minified), int(a.minifiedGzip), `${fixed(c.totalGzip / a.minifiedGzip, 1)}×`]),
    ),
  );
  md.push("");
  for (const [name, a] of Object.entries(size.anchors)) {
    if (a.minifiedGzip < c.totalGzip)
      lose("size (gzip -9)", `tilefetch (wasm + glue) ${int(c.totalGzip)} B is ${fixed(c.totalGzip / a.minifiedGzip, 1)}× ${name} (${int(a.minifiedGzip)} B)`);
  }
}

// ------------------------------------------------------------------ start-up
const startup = readJson("startup.json");
md.push("## Start-up");
md.push("");
if (!startup) {
  md.push("Not run (bench/out/startup.json is missing).");
} else {
  md.push("From `import` to the first call being possible: for tilefetch, until `fetchTile` has returned its promise for a first");
  md.push("call (with a pre-aborted signal): what holds back a module that imports it; for the anchors, the import alone. The");
  md.push("second tilefetch row is until that call has settled (it must reject with `aborted`), i.e. the wasm module compiled and");
  md.push("instantiated: in Node at import, in a browser in the background after it (the entry has no top-level await).");
  md.push(`Each in a fresh Node process / fresh Chromium context, ${startup.reps} times, alternating; medians.`);
  md.push("");
  const names = Object.keys(startup.node);
  const rows = names.map((n) => [n === "tilefetch" ? "**tilefetch**" : n, fixed(startup.node[n].medianMs, 1), fixed(startup.chromium[n]?.medianMs, 1)]);
  if (startup.node.tilefetch.readyMedianMs !== undefined) {
    rows.splice(1, 0, [
      "tilefetch, until the module is ready",
      fixed(startup.node.tilefetch.readyMedianMs, 1),
      fixed(startup.chromium.tilefetch.readyMedianMs, 1),
    ]);
  }
  md.push(table(["module", "Node ms", "Chromium ms"], rows));
  md.push("");
  for (const platform of ["node", "chromium"]) {
    const t = startup[platform].tilefetch.medianMs;
    const beaters = names.filter((n) => n !== "tilefetch" && startup[platform][n].medianMs < t);
    if (beaters.length)
      lose(
        "start-up",
        `${platform === "node" ? "Node" : "Chromium"}: tilefetch ${fixed(t, 1)} ms; faster: ${beaters.map((n) => `${n} ${fixed(startup[platform][n].medianMs, 1)} ms`).join(", ")}`,
      );
  }
}

// ------------------------------------------------------------------ first request
// The issue's bound on how much later an adapter's first tile request may leave (warm cache).
const FIRST_REQUEST_TARGET_MS = 20;
const firstRequest = readJson("first-request.json");
md.push("### A map's first tile request");
md.push("");
if (!firstRequest) {
  md.push("Not run (bench/out/first-request.json is missing).");
} else {
  const { summarise: summariseFirst } = await import("./first-request.mjs");
  md.push("When a map's first tile request leaves (`node bench/first-request.mjs`): each library's test page built by Vite and served as");
  md.push("a site serves its build (the HTML asked again each visit, the hashed assets kept), opened at an address that makes the");
  md.push("map as soon as the page's modules have run; the first tile request's start (Resource Timing) from the navigation's start,");
  md.push("through the adapter and through the library's own loader. **Cold**: a fresh browser context; **warm**: the same page");
  md.push("again in that context (its assets from the HTTP cache, what the adapters learned of the tile server kept), on tiles of");
  md.push(`its own. ${firstRequest.rounds} rounds per library, the loaders alternating first; medians, and the median of the rounds'`);
  md.push(`differences (adapter − own loader). Target: warm ≤ ${FIRST_REQUEST_TARGET_MS} ms.`);
  md.push("");
  const title = firstRequest.titles ?? {};
  const rows = [];
  for (const lib of firstRequest.libs) {
    const s = summariseFirst(firstRequest.runs, lib);
    const cell = (v) => `${fixed(v.laterMs, 1)} (${fixed(v.laterRange[0], 1)} to ${fixed(v.laterRange[1], 1)})`;
    rows.push([
      title[lib] ?? lib,
      `${fixed(s.warm.ownRequestMs, 1)} / ${fixed(s.warm.adapterRequestMs, 1)}`,
      cell(s.warm),
      `${fixed(s.cold.ownRequestMs, 1)} / ${fixed(s.cold.adapterRequestMs, 1)}`,
      cell(s.cold),
      fixed(s.warm.moduleReadyMs, 1),
    ]);
    if (s.warm.laterMs > FIRST_REQUEST_TARGET_MS) {
      lose(
        "first tile request, warm HTTP cache",
        `${title[lib] ?? lib}: ${fixed(s.warm.laterMs, 1)} ms after the own loader's (target ≤ ${FIRST_REQUEST_TARGET_MS} ms)`,
      );
    }
  }
  md.push(
    table(
      ["library", "warm: own / adapter ms", "warm: adapter later by ms", "cold: own / adapter ms", "cold: adapter later by ms", "warm: module ready ms"],
      rows,
    ),
  );
  md.push("");
}

// ------------------------------------------------------------------ soak
const soak = readJson("soak.json");
md.push("## Soak");
md.push("");
if (!soak) {
  md.push("Not run (bench/out/soak.json is missing).");
} else {
  md.push(`${int(soak.calls)} fetchTile calls in one Node process after 3,000 of warm-up (\`bench/soak.mjs\`; the test command runs the same`);
  md.push(
    `body with 20,000), against an in-process fake fetch: ${Object.entries(soak.outcomes)
      .map(([k, n]) => `${int(n)} ${k}`)
      .join(", ")};`,
  );
  md.push(`${int(soak.fetches)} requests, ${fixed(soak.ms / 1000, 1)} s.`);
  md.push("");
  md.push(
    table(
      ["", "after warm-up", `after ${int(soak.calls)} calls`],
      [
        ["wasm linear memory (the instance's `memory` export)", `${int(soak.before.wasmMemoryBytes)} B`, `${int(soak.after.wasmMemoryBytes)} B`],
        ["JS heap used (after gc)", `${fixed(soak.before.heapUsed / 1e6, 2)} MB`, `${fixed(soak.after.heapUsed / 1e6, 2)} MB`],
        ["pending timers (`process.getActiveResourcesInfo()`)", soak.before.timers, soak.after.timers],
        ["tiles and errors handed out / garbage-collected", "", `${int(soak.results.registered)} / ${int(soak.results.collected)}`],
        ["calls in flight or queued (`stats()`)", "", soak.inFlight],
      ],
    ),
  );
  md.push("");
  for (const [what, ok] of soakVerdicts(soak)) {
    md.push(`- ${ok ? "pass" : "**FAIL**"}: ${what}`);
    if (!ok) lose("soak", `**FAILED**: ${what}`);
  }
  md.push("");
}

// ------------------------------------------------------------------ Rust sections
md.push("## Jitter experiment (Rust)");
md.push("");
md.push(readText("jitter.md") ?? "Not run (bench/out/jitter.md is missing).");
md.push("");
md.push("## Fuzzing (Rust)");
md.push("");
md.push(readText("fuzz.md") ?? "Not run (bench/out/fuzz.md is missing).");
md.push("");

// ------------------------------------------------------------------ losses, at the top
const lossText = ["## Where tilefetch loses", ""];
const lossCount = [...losses.values()].reduce((a, l) => a + l.length, 0);
if (lossCount === 0) {
  lossText.push("Nowhere: on every figure below, tilefetch is at least as good as every other client.");
} else {
  lossText.push("Computed from the figures below: each figure on which another client (an anchor or a baseline) does better than");
  lossText.push("tilefetch's fetchTile or TileClient, with the best such client, and each target tilefetch misses. Latency is of");
  lossText.push("correct tiles only, so a client that gave up on the hard tiles can show a lower one.");
  lossText.push("");
  for (const [section, lines] of losses) {
    lossText.push(`- **${section}**`);
    for (const l of lines) lossText.push(`  - ${l}`);
  }
}
const text = `${md.join("\n").replace("<!-- LOSSES -->", lossText.join("\n"))}\n`;
fs.writeFileSync(path.join(HERE, "RESULTS.md"), text);
process.stderr.write(`wrote bench/RESULTS.md (${lossCount} losses listed)\n`);

/** How often a call crosses the JS⇄wasm boundary, by name (bench/crossings.mjs). */
function crossingsSection(crossings) {
  const out = ["### Crossings between JS and the wasm module, per call", ""];
  if (!crossings) return [...out, "Not run (bench/out/crossings.json is missing).", ""];
  const ids = Object.keys(crossings.clients);
  if (!ids.length) return [...out, "Not run (no build of tilefetch was there to count).", ""];
  const total = (id) => Object.values(crossings.clients[id].perCall).reduce((a, b) => a + b, 0);
  out.push(`\`node bench/crossings.mjs\`: ${int(crossings.tiles)} healthy tiles, ${crossings.concurrency} at a time, after 200 of warm-up; every`);
  out.push("import the module calls (wasm → JS) and every export JS calls (JS → wasm), counted by wasm-bindgen's name. The count");
  out.push("hardly moves with the machine's load, as time does (hedges, timers and wakes depend on timing, a few per hundred calls):");
  out.push("it is what a change to the boundary adds or removes.");
  out.push("");
  out.push(
    table(
      ["", ...ids.map((id) => crossings.clients[id].label)],
      [
        ["**crossings per call**", ...ids.map((id) => `**${fixed(total(id), 1)}**`)],
        [
          "hedges sent per call",
          ...ids.map((id) => (crossings.clients[id].hedgesPerCall == null ? "– (no hedging)" : fixed(crossings.clients[id].hedgesPerCall, 3))),
        ],
      ],
    ),
  );
  out.push("");
  const names = [...new Set(ids.flatMap((id) => Object.keys(crossings.clients[id].perCall)))];
  const first = (crossings.clients["tilefetch-fetchtile"] ?? crossings.clients[ids[0]]).perCall;
  names.sort((a, b) => (first[b] ?? 0) - (first[a] ?? 0));
  out.push("<details><summary>by name</summary>");
  out.push("");
  out.push(
    table(
      ["crossing", ...ids.map((id) => crossings.clients[id].label)],
      names.map((name) => [`\`${name}\``, ...ids.map((id) => fixed(crossings.clients[id].perCall[name] ?? 0, 2))]),
    ),
  );
  out.push("");
  out.push("</details>");
  out.push("");
  return out;
}

/** The Chromium half of "with the network taken out" (bench/own-work-chromium.mjs). */
function ownWorkChromiumSection(own) {
  const out = ["### With the network taken out (Chromium, fetch stubbed)", ""];
  if (!own) return [...out, "Not run (bench/out/own-work-chromium.json is missing).", ""];
  const s = own.summary;
  const name = (id) => ({ "tileclient-no-recent": "tilefetch TileClient, no recent tiles (`memoryCacheBytes: 0`)" })[id] ?? label(id);
  out.push(`\`node bench/own-work-chromium.mjs\`: in a page of headless Chromium ${own.version}, the page's \`fetch\` answers the tiles' requests at`);
  out.push(
    `once with the same PNG tile; ${int(own.tiles)} calls per batch, ${own.concurrency} at a time, ${own.rounds} rounds after ${own.warmup} of warm-up, the clients`,
  );
  out.push("taking turns. The main thread's busy time per call (the DevTools protocol's TaskDuration, read around each batch): what a");
  out.push("call costs the thread a map draws on. fetchTile keeps recent tiles, a TileClient with `memoryCacheBytes: 0` none; the");
  out.push(`responses are script-made (their headers can be changed), so a kept tile's headers are copied for each caller.`);
  out.push("");
  out.push(
    table(
      ["client", "main thread µs per call", "over the plain JS wrapper (median of paired rounds)"],
      Object.keys(s).map((id) => [
        isTilefetch(id) || id === "tileclient-no-recent" ? `**${name(id)}**` : name(id),
        fixed(s[id].cpuUsPerCall, 1),
        fixed(s[id].extraCpuOverReferenceUsPerCall, 1),
      ]),
    ),
  );
  out.push("");
  return out;
}

/** CPU per call with fetch stubbed out (bench/own-work.mjs), beside the same over real sockets. */
function ownWorkSection(own, overhead) {
  const out = ["### With the network taken out (Node, fetch stubbed)", ""];
  if (!own) return [...out, "Not run (bench/out/own-work.json is missing).", ""];
  const s = summarise(own.samples, { tiles: own.tiles });
  const sockets = overhead?.node ? summarise(overhead.node.samples, { tiles: overhead.node.tiles }) : null;
  out.push(`\`node bench/own-work.mjs\`: the global \`fetch\` replaced by a stub that answers at once with the same PNG tile; ${int(own.tiles)} calls`);
  out.push(
    `per batch, ${own.concurrency} at a time, ${own.rounds} rounds after ${own.warmup} of warm-up, the clients taking turns; CPU per call, medians of the`,
  );
  out.push("differences paired within rounds. Beside it, the same clients' CPU over the wrapper on real sockets (the overhead bench,");
  out.push("above): how much more the same code costs when its calls run between undici's socket and parser work.");
  out.push("");
  const wrapper = label(OVERHEAD_TARGET.wrapper);
  out.push(
    table(
      ["client", "CPU µs per call, stub fetch", `over the ${wrapper}, stub fetch`, `over the ${wrapper}, real sockets`, "real sockets ÷ stub"],
      Object.keys(s).map((id) => {
        const stub = s[id].extraCpuOverReferenceUsPerCall;
        const real = sockets?.[id]?.extraCpuOverReferenceUsPerCall;
        const grows = real != null && stub > 5 ? `${fixed(real / stub, 1)}×` : "–";
        return [isTilefetch(id) ? `**${label(id)}**` : label(id), fixed(s[id].cpuUsPerCall, 1), fixed(stub, 1), real == null ? "–" : fixed(real, 1), grows];
      }),
    ),
  );
  out.push("");
  // What the figures say about the Node targets, in the figures of this run.
  const floorReal = sockets?.[FLOOR_ID];
  const tf = "tilefetch-fetchtile";
  if (floorReal && s[FLOOR_ID] && s[tf] && sockets[tf]) {
    const over = (x) => x.extraCpuOverReferenceUsPerCall;
    out.push(
      `On real sockets the ${label(FLOOR_ID)} alone costs ${fixed(over(floorReal), 1)} µs CPU per call over the wrapper and ${fixed(floorReal.ratio, 3)}× raw fetch's wall time`,
    );
    const grow = [over(sockets[tf]) / over(s[tf]), over(floorReal) / over(s[FLOOR_ID])];
    const alike = Math.abs(grow[0] / grow[1] - 1) <= 0.2;
    out.push(
      `(targets: ${OVERHEAD_TARGET.cpuOverWrapperUs} µs, ${OVERHEAD_TARGET.ratio.node}×). With fetch stubbed out, fetchTile costs ${fixed(over(s[tf]), 1)} µs per call over the wrapper, of which`,
    );
    out.push(
      `${fixed(over(s[FLOOR_ID]), 1)} is the floor's and ${fixed(over(s[tf]) - over(s[FLOOR_ID]), 1)} tilefetch's own work beyond it; on sockets fetchTile's figure grows ${fixed(grow[0], 1)}× and the floor's`,
    );
    out.push(`${fixed(grow[1], 1)}×${alike ? ", alike within 20 %" : ""}.`);
    out.push("");
  }
  return out;
}
