#!/usr/bin/env node
// The main job: fetch a few hundred tiles from the embedded fault-injecting server through
// fetchTile, next to the same tiles through plain fetch, and print what happened.
//
//   node www/demo.mjs [--tiles 300] [--concurrency 32] [--seed 7]
//
// scripts/demo.sh runs it, then starts the interactive page (www/serve.mjs).
import { performance } from "node:perf_hooks";
import { fetchTile, stats } from "../pkg/node.js";
import { startFaultServer, tilePng } from "../tests/server/fault-server.mjs";

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const TILES = arg("tiles", 300);
const CONCURRENCY = arg("concurrency", 32);
const SEED = arg("seed", 7);

// What each tile's server does to it; cycled over the tiles.
const SCENARIOS = [
  ["healthy", {}],
  ["flaky 503 (p=0.3)", { f: 503, p: 0.3 }],
  ["rate limit 10/s, 429 + RA: 1", { f: "bucket", rate: 10, burst: 10, ra: 1 }],
  ["200 + ServiceException XML", { f: "sexml", n: 1 }],
  ["200 + HTML error page", { f: "html", n: 1 }],
  ["truncated PNG", { f: "truncate", n: 1 }],
  ["reset mid-body", { f: "reset", n: 1 }],
  ["slow tail (p=0.2, 5 s)", { slowp: 0.2, slowms: 5000 }],
  ["permanent 404", { f: 404 }],
  ["Retry-After: 86400", { f: 429, ra: 86400 }],
];

// One server (one host:port) per scenario: what tilefetch learns about a host, such as a pause
// ordered by Retry-After, is shared by that host's tiles, as it would be on the real network.
const servers = await Promise.all(SCENARIOS.map(() => startFaultServer({ seed: SEED })));
const tiles = Array.from({ length: TILES }, (_, i) => {
  const z = 12;
  const x = 1000 + (i % 40);
  const y = 1500 + Math.floor(i / 40);
  const s = i % SCENARIOS.length;
  const [scenario, params] = SCENARIOS[s];
  return { z, x, y, scenario, params, server: servers[s] };
});
const urlOf = (t, run) => `${t.server.url}/tile/${t.z}/${t.x}/${t.y}.png?${new URLSearchParams({ run, ...params(t) })}`;
const requestsOf = (run) => servers.reduce((sum, srv) => sum + srv.requests(run), 0);
const params = (t) => Object.fromEntries(Object.entries(t.params).map(([k, v]) => [k, String(v)]));

async function pool(items, work) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

function newTally() {
  return { correct: 0, wrong: 0, failed: {}, attempts: 0, retries: 0, byScenario: {} };
}
function record(tally, t, outcome) {
  const row = (tally.byScenario[t.scenario] ??= { correct: 0, wrong: 0, failed: 0 });
  row[outcome]++;
}

async function runTilefetch() {
  const tally = newTally();
  await pool(tiles, async (t) => {
    const signal = AbortSignal.timeout(6000);
    try {
      const tile = await fetchTile(urlOf(t, "tilefetch"), {
        signal,
        onRetry: () => tally.retries++,
      });
      tally.attempts += tile.attempts;
      const ok = Buffer.from(tile.data).equals(tilePng(t.z, t.x, t.y));
      ok ? tally.correct++ : tally.wrong++;
      record(tally, t, ok ? "correct" : "wrong");
    } catch (error) {
      tally.attempts += error.attempts ?? 0;
      tally.failed[error.kind] = (tally.failed[error.kind] ?? 0) + 1;
      record(tally, t, "failed");
    }
  });
  return tally;
}

async function runPlainFetch() {
  const tally = newTally();
  await pool(tiles, async (t) => {
    try {
      const response = await fetch(urlOf(t, "plain"), { signal: AbortSignal.timeout(6000) });
      const body = Buffer.from(await response.arrayBuffer());
      tally.attempts++;
      if (!response.ok) throw Object.assign(new Error(), { kind: `http ${response.status}` });
      const ok = body.equals(tilePng(t.z, t.x, t.y));
      ok ? tally.correct++ : tally.wrong++;
      record(tally, t, ok ? "correct" : "wrong");
    } catch (error) {
      const kind = error.kind ?? (error.name === "TimeoutError" ? "timeout" : "network");
      tally.failed[kind] = (tally.failed[kind] ?? 0) + 1;
      record(tally, t, "failed");
    }
  });
  return tally;
}

function report(name, tally, ms, requests) {
  const failed = Object.entries(tally.failed)
    .map(([k, n]) => `${k} ${n}`)
    .join(", ");
  console.log(`\n${name}: ${(ms / 1000).toFixed(1)} s wall`);
  console.log(`  tiles delivered correct: ${tally.correct}/${TILES}`);
  console.log(`  error bodies delivered as tiles: ${tally.wrong}`);
  console.log(`  gave up: ${Object.values(tally.failed).reduce((a, b) => a + b, 0)}${failed ? ` (${failed})` : ""}`);
  console.log(`  server requests: ${requests} (${(requests / TILES).toFixed(2)} per tile)${tally.retries ? `, retries: ${tally.retries}` : ""}`);
}

console.log(`tilefetch demo: ${TILES} tiles, concurrency ${CONCURRENCY}, 6 s deadline per tile, seed ${SEED}`);
console.log("scenarios cycled over the tiles, each on its own loopback fault server:");
SCENARIOS.forEach(([name], i) => {
  console.log(`  - ${name.padEnd(30)} ${servers[i].url}`);
});

let t0 = performance.now();
const plain = await runPlainFetch();
report("plain fetch (no retries, no checks)", plain, performance.now() - t0, requestsOf("plain"));
t0 = performance.now();
const tf = await runTilefetch();
report("tilefetch fetchTile (interactive preset)", tf, performance.now() - t0, requestsOf("tilefetch"));

console.log("\nper scenario (correct / error bodies as tiles / failed): plain fetch → tilefetch");
for (const [name] of SCENARIOS) {
  const a = plain.byScenario[name] ?? {};
  const b = tf.byScenario[name] ?? {};
  const cell = (r) => `${r.correct ?? 0}/${r.wrong ?? 0}/${r.failed ?? 0}`;
  console.log(`  ${name.padEnd(30)} ${cell(a).padStart(10)} → ${cell(b)}`);
}

console.log("\nper-host stats of the default client (stats()):");
const hostStats = stats();
for (const [host, h] of Object.entries(hostStats)) {
  const scenario = SCENARIOS[servers.findIndex((srv) => srv.url.endsWith(host))]?.[0] ?? "";
  const giveUps =
    Object.entries(h.giveUps)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ") || "none";
  console.log(
    `  ${host} (${scenario}): ${h.requests} calls, ${h.attempts} attempts, ${h.retries} retries, ` +
      `${h.successes} tiles, give-ups ${giveUps}, aborted ${h.aborted}, coalesced ${h.coalesced}`,
  );
  console.log(
    `    breaker ${h.breaker.state}, retry tokens ${h.retryTokens}, ` +
      `paused until ${h.pausedUntil ? new Date(h.pausedUntil).toISOString() : "-"}, ` +
      `learned rate ${h.rateLimitPerSecond ?? "-"}/s, latency p50/p95/p99 ${h.latencyMs.p50}/${h.latencyMs.p95}/${h.latencyMs.p99} ms`,
  );
}

await Promise.all(servers.map((srv) => srv.close()));
