// Edge scale: does the UpstreamGate bound an upstream's outage load whatever the number of
// isolates? K worker scripts in one workerd (Miniflare), each its own isolate with its own
// TileClient, bound to one gate Durable Object class (defined by the first, `scriptName` for the
// others), in front of the loopback fault server.
//
//   outage: requests one every INTERVAL_MS, round-robin over the isolates, each for a tile no
//     earlier request asked for, for TOTAL_MS; the upstream answers 503 for OUTAGE_MS from the
//     first. Counted: upstream requests that arrived during the outage, gate RPCs (the
//     Server-Timing `gate` entry of each answer), time from the outage's end to the first tile.
//     1, 2, 4, 8 isolates gated, and 4 without a gate.
//   healthy: one isolate, HEALTHY_N requests, HEALTHY_CONCURRENCY at a time, gated, without a
//     gate, and with a gate that is bound but down (every RPC throws): per-tile latency, failures.
//   stale: one isolate with the proxy's defaults (but cacheTtlS 1, so that its tiles go stale):
//     STALE_TILES tiles cached, then an outage of STALE_OUTAGE_MS; a stale tile (its first call), new
//     tiles one after another until the isolate knows the upstream is down, then a stale tile and
//     a new tile again, each timed with the upstream requests it cost; then the time from the
//     outage's end to the first fresh tile.
//
// Config as in the issue: deadlineMs 1500, gate openMs 1000, maxOpenMs 1500 (threshold 5).
// Writes bench/out/edge.json; bench/report.mjs turns it into the "Edge scale" section.
//   node bench/edge-scale.mjs [--runs 3]
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { Miniflare } from "miniflare";
import { startFaultServer } from "../tests/server/fault-server.mjs";
import { proxyModules } from "../tests/workerd/modules.mjs";
import { option } from "./cli.mjs";
import { OUT, ROOT } from "./bundle.mjs";
import { median, quantile } from "./stats.mjs";

const COMMAND = "node bench/edge-scale.mjs";
const RUNS = Number(option("runs", "3"));
const INTERVAL_MS = 50;
const OUTAGE_MS = 5000;
const TOTAL_MS = 8000;
const HEALTHY_N = 200;
const HEALTHY_CONCURRENCY = 8;
const COMPATIBILITY_DATE = "2026-04-01";
const STALE_TILES = 4;
// Longer than the outage above: a new tile asked for before the upstream is known down takes its
// call's whole deadline (the defaults: 6 s), and the known-down cases come after it.
const STALE_OUTAGE_MS = 10_000;
const OUTAGE_CONFIGS = [
  { isolates: 1, gate: "on" },
  { isolates: 2, gate: "on" },
  { isolates: 4, gate: "on" },
  { isolates: 8, gate: "on" },
  { isolates: 4, gate: "off" },
];
const HEALTHY_CONFIGS = ["off", "on", "down"];

/** The proxy's config for one fault-server run. */
const proxyConfig = (srv, run, gate) => ({
  upstream: `${srv.url}/tile/{z}/{x}/{y}.png?run=${run}`,
  deadlineMs: 1500,
  gate: gate === "off" ? false : { openMs: 1000, maxOpenMs: 1500 },
});

async function start(srv, run, isolates, gate, config = proxyConfig(srv, run, gate)) {
  const className = gate === "down" ? "DownGate" : "UpstreamGate";
  const workers = Array.from({ length: isolates }, (_, i) => ({
    name: `w${i}`,
    compatibilityDate: COMPATIBILITY_DATE,
    modulesRoot: ROOT,
    // The tile-proxy fixture of the workerd tests: one handler per scenario, `DownGate` a gate
    // that is bound but down.
    modules: proxyModules(),
    bindings: { SCENARIOS: { edge: config }, DEFAULT: "edge" },
    ...(gate === "off" ? {} : { durableObjects: { UPSTREAM_GATE: i === 0 ? className : { className, scriptName: "w0" } } }),
  }));
  const mf = new Miniflare({ workers, handleRuntimeStdio: () => {} });
  await mf.ready;
  return { mf, workers: await Promise.all(workers.map((w) => mf.getWorker(w.name))) };
}

/** One request through a worker: status, when it ended (performance.now()), gate RPCs. */
async function request(worker, url) {
  const t = performance.now();
  const res = await worker.fetch(url);
  await res.arrayBuffer();
  const timing = res.headers.get("server-timing") ?? "";
  const gateCalls = Number(/gate;dur=[\d.]+;desc="(\d+) calls?"/.exec(timing)?.[1] ?? 0);
  return { status: res.status, start: t, end: performance.now(), ms: performance.now() - t, gateCalls };
}

const tileOf = (i) => `/tiles/12/${i % 64}/${Math.floor(i / 64)}.png`;

async function outageRun(srv, { isolates, gate }, runIndex) {
  const run = `edge-${isolates}-${gate}-${runIndex}`;
  const { mf, workers } = await start(srv, run, isolates, gate);
  try {
    // A warm isolate each (module instantiated, the gate's object created): one tile apiece.
    for (const [i, w] of workers.entries()) await request(w, `http://edge.test/tiles/3/${i}/0.png`);
    const warm = srv.requests(run);
    const outage = srv.outage(run, OUTAGE_MS);
    const t0 = performance.now();
    const pending = [];
    for (let i = 0; performance.now() - t0 < TOTAL_MS; i++) {
      const due = t0 + i * INTERVAL_MS;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      pending.push(request(workers[i % workers.length], `http://edge.test${tileOf(i)}`));
    }
    const results = await Promise.all(pending);
    const during = srv.log.filter((e) => e.key.startsWith(`${run}/`) && e.t >= outage.start && e.t < outage.end).length;
    const endClient = t0 + OUTAGE_MS;
    const firstAfter = results.filter((r) => r.status === 200 && r.end >= endClient).reduce((m, r) => Math.min(m, r.end - endClient), Infinity);
    const served = results.filter((r) => r.status === 200).length;
    const gateCalls = results.reduce((n, r) => n + r.gateCalls, 0);
    return {
      isolates,
      gate,
      requests: results.length,
      upstreamDuringOutage: during,
      upstreamTotal: srv.requests(run) - warm,
      served,
      gateCalls,
      gatePerTile: served > 0 ? gateCalls / results.length : null,
      firstTileAfterMs: Number.isFinite(firstAfter) ? firstAfter : null,
    };
  } finally {
    await mf.dispose();
  }
}

/** One request, timed, with the upstream requests that arrived for its tile meanwhile. */
async function timedTile(srv, run, worker, [z, x, y]) {
  const key = `${run}/${z}/${x}/${y}`;
  const before = srv.requests(key);
  const t = performance.now();
  const res = await worker.fetch(`http://edge.test/tiles/${z}/${x}/${y}.png`);
  await res.arrayBuffer();
  return { status: res.status, stale: res.headers.get("x-tilefetch-stale"), ms: performance.now() - t, upstream: srv.requests(key) - before };
}

async function staleRun(srv, runIndex) {
  const run = `edge-stale-${runIndex}`;
  const { mf, workers } = await start(srv, run, 1, "off", { upstream: `${srv.url}/tile/{z}/{x}/{y}.png?run=${run}`, cacheTtlS: 1 });
  const [w] = workers;
  try {
    const cached = Array.from({ length: STALE_TILES }, (_, i) => [4, i, 1]);
    for (const t of cached) await timedTile(srv, run, w, t);
    await sleep(1100); // past cacheTtlS
    const outage = srv.outage(run, STALE_OUTAGE_MS);
    const t0 = performance.now();
    const firstStale = await timedTile(srv, run, w, cached[0]);
    const uncached = [];
    for (let i = 0; i < 30 && performance.now() - t0 < STALE_OUTAGE_MS - 1000; i++) {
      const r = await timedTile(srv, run, w, [6, i, 9]);
      uncached.push(r);
      if (r.upstream === 0 && r.status === 503) break;
    }
    const knownDownStale = await timedTile(srv, run, w, cached[1]);
    const knownDownNew = await timedTile(srv, run, w, [6, 40, 9]);
    // Recovery: the first fresh tile after the outage's end.
    const endAt = t0 + (outage.end - outage.start);
    const wait = endAt - performance.now();
    if (wait > 0) await sleep(wait);
    let firstFreshMs = null;
    for (let i = 0; performance.now() - endAt < 5000; i++) {
      const r = await timedTile(srv, run, w, cached[2 + (i % 2)]);
      if (r.status === 200 && r.stale === null) {
        firstFreshMs = performance.now() - endAt;
        break;
      }
      await sleep(20);
    }
    return { firstStale, uncached, knownDownStale, knownDownNew, firstFreshMs };
  } finally {
    await mf.dispose();
  }
}

async function healthyRun(srv, gate, runIndex) {
  const run = `edge-healthy-${gate}-${runIndex}`;
  const { mf, workers } = await start(srv, run, 1, gate);
  try {
    for (let i = 0; i < 8; i++) await request(workers[0], `http://edge.test/tiles/3/${i}/1.png`);
    const results = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: HEALTHY_CONCURRENCY }, async () => {
        while (next < HEALTHY_N) {
          const i = next++;
          results.push(await request(workers[0], `http://edge.test${tileOf(i)}`));
        }
      }),
    );
    const ms = results.map((r) => r.ms);
    return {
      gate,
      requests: results.length,
      failed: results.filter((r) => r.status !== 200).length,
      p50: quantile(ms, 0.5),
      p95: quantile(ms, 0.95),
      gatePerTile: results.reduce((n, r) => n + r.gateCalls, 0) / results.length,
    };
  } finally {
    await mf.dispose();
  }
}

const srv = await startFaultServer({ seed: 7 });
const started = performance.now();
try {
  const outage = [];
  const healthy = [];
  const stale = [];
  for (let r = 0; r < RUNS; r++) {
    const st = await staleRun(srv, r);
    stale.push(st);
    console.log(
      `stale run ${r + 1}/${RUNS}: a stale tile, first call ${st.firstStale.ms.toFixed(0)} ms (${st.firstStale.upstream} upstream); ` +
        `${st.uncached.length} new tiles until known down (${st.uncached.map((u) => `${u.ms.toFixed(0)} ms/${u.upstream}`).join(", ")}); ` +
        `then a stale tile ${st.knownDownStale.ms.toFixed(0)} ms (${st.knownDownStale.upstream}), a new tile ${st.knownDownNew.status} in ${st.knownDownNew.ms.toFixed(0)} ms (${st.knownDownNew.upstream}); ` +
        `first fresh tile ${st.firstFreshMs?.toFixed(0) ?? "none"} ms after the outage`,
    );
    for (const c of OUTAGE_CONFIGS) {
      const res = await outageRun(srv, c, r);
      outage.push(res);
      console.log(
        `outage run ${r + 1}/${RUNS}: ${c.isolates} isolate(s), gate ${c.gate}: ${res.upstreamDuringOutage} upstream requests during the outage, ` +
          `first tile ${res.firstTileAfterMs?.toFixed(0) ?? "none"} ms after it, ${res.gateCalls} gate RPCs for ${res.requests} requests, ${res.served} tiles`,
      );
    }
    for (const g of HEALTHY_CONFIGS) {
      const res = await healthyRun(srv, g, r);
      healthy.push(res);
      console.log(
        `healthy run ${r + 1}/${RUNS}: gate ${g}: p50 ${res.p50.toFixed(1)} ms, p95 ${res.p95.toFixed(1)} ms, ${res.failed} failed of ${res.requests}, ${res.gatePerTile.toFixed(2)} gate RPCs per tile`,
      );
    }
  }
  const summary = OUTAGE_CONFIGS.map((c) => {
    const runs = outage.filter((o) => o.isolates === c.isolates && o.gate === c.gate);
    return { ...c, during: median(runs.map((o) => o.upstreamDuringOutage)), firstAfter: Math.max(...runs.map((o) => o.firstTileAfterMs ?? Infinity)) };
  });
  for (const s of summary)
    console.log(
      `median: ${s.isolates} isolate(s), gate ${s.gate}: ${s.during} upstream requests during the outage; slowest first tile after it ${s.firstAfter.toFixed(0)} ms`,
    );
  fs.mkdirSync(OUT, { recursive: true });
  fs.writeFileSync(
    path.join(OUT, "edge.json"),
    `${JSON.stringify(
      {
        command: `${COMMAND} --runs ${RUNS}`,
        setup: {
          intervalMs: INTERVAL_MS,
          outageMs: OUTAGE_MS,
          totalMs: TOTAL_MS,
          healthyN: HEALTHY_N,
          healthyConcurrency: HEALTHY_CONCURRENCY,
          config: proxyConfig({ url: "…" }, "RUN", "on"),
        },
        outage,
        healthy,
        stale,
        staleOutageMs: STALE_OUTAGE_MS,
        seconds: (performance.now() - started) / 1000,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`wrote bench/out/edge.json (${((performance.now() - started) / 1000).toFixed(0)} s); reproduce: ${COMMAND} --runs ${RUNS}`);
} finally {
  await srv.close();
}
