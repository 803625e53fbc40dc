// Slow is not failed, and quotas that reset on a clock, in Node and through the edge proxy:
//
//   slow: every answer of the loopback fault server after 2–3 s, healthy. SLOW_TILES tiles asked
//     at once of one host: through a default `TileClient` in Node (each call's signal aborts it
//     after SLOW_LIMIT_MS, the 20 s a map-view step allows), and through the edge proxy with its
//     defaults (one workerd isolate, the UpstreamGate bound) in front of such an upstream.
//     Counted: tiles delivered (the proxy: answered 200), upstream requests per tile, wall time.
//   window: a quota of WINDOW_QUOTA requests per fixed window of WINDOW_S s, stated in the
//     draft's fields, 429 + Retry-After past it; WINDOW_TILES tiles, WINDOW_CONCURRENCY at a time,
//     through the edge proxy with its defaults and WINDOW_ISOLATES isolates sharing the gate
//     (requests round-robin over them). Counted: tiles answered 200, upstream 429s as a share of
//     the upstream requests, wall time against the windows' floor. (Node's clients meet the same
//     quota in `node bench/fault.mjs --scenarios fixed-window`.)
//
// Prints each run as it ends, then the section bench/report.mjs will make of it (its table and
// missed targets) and the command. Writes bench/out/slow-upstream.json.
//   node bench/slow-upstream.mjs [--runs 2] [--parts slowNode,slowEdge,windowEdge]
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { Miniflare } from "miniflare";
import { startFaultServer } from "../tests/server/fault-server.mjs";
import { proxyModules } from "../tests/workerd/modules.mjs";
import { option } from "./cli.mjs";
import { OUT, ROOT } from "./bundle.mjs";
import { scenarioById, windowFloorMs } from "./scenarios.mjs";
import { slowUpstreamSection } from "./report-slow-upstream.mjs";

const COMMAND = "node bench/slow-upstream.mjs";
const RUNS = Number(option("runs", "2"));
const ALL_PARTS = "slowNode,slowEdge,windowEdge";
const PARTS = option("parts", ALL_PARTS).split(",");
const RAN = `${COMMAND} --runs ${RUNS}${PARTS.join(",") === ALL_PARTS ? "" : ` --parts ${PARTS.join(",")}`}`;
// The fault benchmark's slow server and window, so that Node's clients there and the proxy here
// meet the same upstream: its answers, its tile count, and (slow) the 20 s a tile may take.
const SLOW = scenarioById("slow-healthy");
const SLOW_TILES = SLOW.run.tiles;
const SLOW_QUERY = new URLSearchParams(SLOW.params).toString();
const SLOW_LIMIT_MS = SLOW.run.deadlineMs;
const WINDOW = scenarioById("fixed-window");
const WINDOW_QUERY = new URLSearchParams(WINDOW.params).toString();
const WINDOW_QUOTA = WINDOW.window.quota;
const WINDOW_S = WINDOW.window.seconds;
const WINDOW_TILES = WINDOW.run.tiles;
const WINDOW_CONCURRENCY = WINDOW.run.concurrency;
const WINDOW_ISOLATES = 4;
const COMPATIBILITY_DATE = "2026-04-01";

/** `isolates` workers of the proxy fixture with `upstream` and otherwise its defaults, sharing one gate. */
async function startProxy(upstream, isolates) {
  const workers = Array.from({ length: isolates }, (_, i) => ({
    name: `w${i}`,
    compatibilityDate: COMPATIBILITY_DATE,
    modulesRoot: ROOT,
    modules: proxyModules(),
    bindings: { SCENARIOS: { edge: { upstream } }, DEFAULT: "edge" },
    durableObjects: { UPSTREAM_GATE: i === 0 ? "UpstreamGate" : { className: "UpstreamGate", scriptName: "w0" } },
  }));
  const mf = new Miniflare({ workers, handleRuntimeStdio: () => {} });
  await mf.ready;
  return { mf, workers: await Promise.all(workers.map((w) => mf.getWorker(w.name))) };
}

/** `n` jobs, `concurrency` at a time; resolves to their results in order. */
async function pool(n, concurrency, job) {
  const results = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      while (next < n) {
        const i = next++;
        results[i] = await job(i);
      }
    }),
  );
  return results;
}

const tilePath = (i) => `/tiles/12/${i % 64}/${Math.floor(i / 64)}.png`;

async function slowNode(srv, run) {
  const { TileClient } = await import("../pkg/node.js");
  const client = new TileClient();
  const t0 = performance.now();
  const results = await pool(SLOW_TILES, SLOW_TILES, async (i) => {
    const signal = AbortSignal.timeout(SLOW_LIMIT_MS);
    try {
      await client.fetchTile(`${srv.url}/tile/12/${i % 64}/${Math.floor(i / 64)}.png?run=${run}&${SLOW_QUERY}`, { signal });
      return "ok";
    } catch (error) {
      return error?.kind ?? String(error);
    }
  });
  return outcome(srv, run, results, t0);
}

async function slowEdge(srv, run) {
  const { mf, workers } = await startProxy(`${srv.url}/tile/{z}/{x}/{y}.png?run=${run}&${SLOW_QUERY}`, 1);
  try {
    const t0 = performance.now();
    const results = await pool(SLOW_TILES, SLOW_TILES, async (i) => {
      const res = await workers[0].fetch(`http://edge.test${tilePath(i)}`);
      const body = await res.text();
      return res.status === 200 ? "ok" : failure(res, body);
    });
    return outcome(srv, run, results, t0);
  } finally {
    await mf.dispose();
  }
}

async function windowEdge(srv, run) {
  const upstream = `${srv.url}/tile/{z}/{x}/{y}.png?run=${run}&${WINDOW_QUERY}`;
  const { mf, workers } = await startProxy(upstream, WINDOW_ISOLATES);
  try {
    const t0 = performance.now();
    const results = await pool(WINDOW_TILES, WINDOW_CONCURRENCY, async (i) => {
      const res = await workers[i % workers.length].fetch(`http://edge.test${tilePath(i)}`);
      const body = await res.text();
      return res.status === 200 ? "ok" : failure(res, body);
    });
    return outcome(srv, run, results, t0);
  } finally {
    await mf.dispose();
  }
}

/** A failed answer of the proxy: its status and what its body says (which of its reasons). */
const failure = (res, body) => `${res.status} ${body.split(/[(:]/)[0].trim()}`;

/** What a run delivered and cost the upstream. */
function outcome(srv, run, results, t0) {
  const wallMs = performance.now() - t0;
  const log = srv.log.filter((e) => e.key.startsWith(`${run}/`));
  const failures = {};
  for (const r of results.filter((r) => r !== "ok")) failures[r] = (failures[r] ?? 0) + 1;
  return {
    tiles: results.length,
    delivered: results.filter((r) => r === "ok").length,
    failures,
    upstream: log.length,
    perTile: log.length / results.length,
    refused: log.filter((e) => e.fault === "window-429").length,
    wallMs,
  };
}

const line = (name, r) =>
  `${name}: ${r.delivered}/${r.tiles} delivered, ${r.upstream} upstream requests (${r.perTile.toFixed(2)} per tile), ` +
  `${r.refused ? `${r.refused} × 429, ` : ""}${(r.wallMs / 1000).toFixed(2)} s${Object.keys(r.failures).length ? `; failed: ${JSON.stringify(r.failures)}` : ""}`;

const srv = await startFaultServer({ seed: 7 });
const runs = { slowNode: [], slowEdge: [], windowEdge: [] };
try {
  for (let r = 0; r < RUNS; r++) {
    for (const [name, fn] of [
      ["slowNode", slowNode],
      ["slowEdge", slowEdge],
      ["windowEdge", windowEdge],
    ].filter(([name]) => PARTS.includes(name))) {
      const res = await fn(srv, `${name}-${r}`);
      runs[name].push(res);
      console.log(`run ${r + 1}/${RUNS} ${line(name, res)}`);
    }
  }
} finally {
  await srv.close();
}
const floorMs = windowFloorMs(WINDOW_TILES, { quota: WINDOW_QUOTA, seconds: WINDOW_S });
const data = {
  command: RAN,
  setup: {
    slowTiles: SLOW_TILES,
    slowQuery: SLOW_QUERY,
    slowLimitMs: SLOW_LIMIT_MS,
    windowQuota: WINDOW_QUOTA,
    windowS: WINDOW_S,
    windowTiles: WINDOW_TILES,
    windowConcurrency: WINDOW_CONCURRENCY,
    windowIsolates: WINDOW_ISOLATES,
    windowFloorMs: floorMs,
  },
  runs,
};
fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(path.join(OUT, "slow-upstream.json"), `${JSON.stringify(data, null, 1)}\n`);
// The table bench/RESULTS.md will show, and the targets it will say were missed.
const missed = [];
console.log(`\n${slowUpstreamSection(data, (_where, text) => missed.push(text)).join("\n")}`);
for (const text of missed) console.log(`- ${text}`);
console.log(`reproduce: ${RAN} (writes bench/out/slow-upstream.json)`);
