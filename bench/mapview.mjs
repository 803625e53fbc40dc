#!/usr/bin/env node
// The map-view benchmark: real OpenLayers, Leaflet, MapLibre, CesiumJS and deck.gl in headless Chromium (the test
// pages of tests/browser/fixtures/adapters/), each once with its own tile loader and once with
// the tilefetch adapter (defaults: the default client, interactive preset), over the loopback
// fault server answering in 30–80 ms, through a seeded script of steps: open, 4 pans, 1 zoom in.
// Per step: the time until every tile of the view is loaded (in the page's clock), and, at the
// step's end (every view tile settled, or STEP_LIMIT_MS), the holes and wrong tiles on screen
// (one sampled pixel per tile against the tile's own colour) and the requests the server saw.
// Writes bench/out/mapview.json.
//
//   node bench/mapview.mjs [--server public|fast|fast-returning|mapproxy] [--libs ol,leaflet,maplibre,cesium,deckgl] [--scenarios ok,hang,…]
//     [--fault-rounds N]   (1: each fault scenario's runs; each round draws its faults anew)
//     [--healthy-rounds N]   (6; 12 on the fast server, MapProxy, HTTP/2 and a --viewport. --server fast writes
//     bench/out/mapview-fast.json, fast-returning mapview-fast-returning.json, mapproxy mapview-mapproxy.json)
//     [--merge]   (the libraries run replace theirs in the output file; the others' runs stay)
//     [--protocol h2]   (the fault server over HTTPS with HTTP/2, as a tile CDN serves, with a
//     self-signed certificate Chromium is told to trust; the output file gains -h2)
//     [--viewport 1792x1024]   (the map's size in CSS px: 768x512 by default; the output file
//     gains -1792x1024)
//     [--platform-loader fetch|worker]   (Leaflet only: tilefetch's side is a layer loading through the
//     platform alone, on the page's thread or in a worker; see PLATFORM_LOADER)
//     [--cpu-profile]   (each step under Chromium's profiler: the page's busy ms per step, printed per
//     loader at the end, and its heaviest functions in the output, which gains -cpu; its times are
//     not for the targets)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setUp, viewTiles, samplePoint, readPixels, tileColour, sleep, setMapSize } from "../tests/browser/adapters-common.mjs";
import { loopbackCertificate } from "../tests/server/loopback-cert.mjs";
import { option } from "./cli.mjs";
import { scenarioById } from "./scenarios.mjs";
import { median, prng } from "./stats.mjs";
import { startMapProxy } from "../tests/real-servers/mapproxy/server.mjs";
import { stepProfiler } from "./cpu-profile.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const opt = option;

/** How long a step may take before its missing tiles count as holes. */
export const STEP_LIMIT_MS = 8000;
/**
 * How long each answer of the fault server takes: `public`, 30–80 ms (a public tile server's
 * latency); `fast`, 0–5 ms (a tile CDN's edge, a server on the LAN), where a fixed cost per tile
 * or at start-up is not hidden by the network.
 */
export const SERVERS = {
  public: { latency: "delay=30&delayjitter=50", out: "mapview.json" },
  // The fast server and MapProxy measure the three map libraries of issue "As fast as the map's
  // own loader" (bench/report-mapview-fast.mjs); the others run on the public server's latency.
  // 12 healthy rounds where 6 do elsewhere: a step of a few tens of ms on a 2-core machine shared
  // with the server and the browser moves widely from run to run, and a ratio's median needs pairs.
  fast: { latency: "delay=0&delayjitter=5", out: "mapview-fast.json", libs: ["ol", "leaflet", "maplibre"], healthyRounds: 12 },
  // The fast server again, healthy, for a page that was visited before: what it learned of the
  // tile server then (in its localStorage) is known at the open step, as for a returning user.
  // OpenLayers and Leaflet: their adapters' first contact with a server (docs/map-libraries.md)
  // is what a returning visit skips; MapLibre has none.
  "fast-returning": {
    latency: "delay=0&delayjitter=5",
    out: "mapview-fast-returning.json",
    scenarios: ["ok"],
    libs: ["ol", "leaflet"],
    healthyRounds: 12,
    returning: true,
  },
  // A real MapProxy 7.0.0 as the test suite installs it (tests/real-servers/mapproxy/: its
  // `debug` source, rendered and cached by MapProxy, CORS headers on as it ships): healthy only.
  // Its tiles are not the fault server's, so a tile counts as shown when its library says it
  // loaded; requests are not counted.
  mapproxy: { latency: null, out: "mapview-mapproxy.json", scenarios: ["ok"], libs: ["ol", "leaflet", "maplibre"], healthyRounds: 12 },
};
let LATENCY = SERVERS.public.latency;
let MAPPROXY_URL = null;
let RETURNING = false;
/**
 * `--platform-loader fetch|worker` (Leaflet only): the adapter's side of each pair is a layer
 * that loads tiles through the platform alone, no tilefetch (tests/browser/fixtures/adapters/
 * platform-layer.js): what the page's fetch path costs against Leaflet's own loader, apart from
 * what tilefetch adds. Its runs keep the loader name "tilefetch"; the output file gains
 * -platform-fetch or -platform-worker.
 */
let PLATFORM_LOADER = null;
/**
 * `--cpu-profile`: each step runs under Chromium's profiler (bench/cpu-profile.mjs), and the step's
 * result gains `cpu` (the page's busy ms, its heaviest functions). The profiler slows what it
 * samples: such a run's step times are for comparing loaders' busy time, not for the targets.
 */
let CPU_PROFILE = false;

/** Points runOne at `server` (one of SERVERS), and at MapProxy's `mapproxyUrl` for that one. */
export function useServer(server, mapproxyUrl = null) {
  LATENCY = server.latency;
  MAPPROXY_URL = mapproxyUrl;
  RETURNING = server.returning === true;
}

/**
 * The earlier visit of a returning user, in `page`: the map opened elsewhere (tiles of another
 * zoom, none of the script's) from the same server until its first tile loaded, then the page
 * loaded again. The browser context, and with it the page's localStorage, stays.
 */
async function visitBefore(page, spec, template) {
  await page.evaluate(
    async ({ spec, limitMs }) => {
      window.harness.create(spec);
      const t0 = performance.now();
      while (!Object.values(window.harness.states()).some((r) => r.state === "loaded") && performance.now() - t0 < limitMs) {
        await new Promise((r) => setTimeout(r, 10));
      }
    },
    { spec: { ...spec, template, zoom: 5, center: [16 * 256, 10 * 256] }, limitMs: STEP_LIMIT_MS },
  );
  await page.reload();
  await page.waitForFunction(() => window.harness !== undefined && window.__ready === true, null, { timeout: 15_000 });
}

// What the fault server does to the map's requests. `outageMs`: every request in the first that
// many ms after the map opens gets 503 (or `outage`'s status and Retry-After); the rest as `q` says.
export const MAP_SCENARIOS = [
  { id: "ok", title: "healthy", q: "" },
  { id: "flaky-503", title: "30 % 503", q: "f=503&p=0.3" },
  { id: "hang", title: "10 % never answered", q: "f=hang&p=0.1" },
  { id: "outage", title: "3 s outage (503) at open", q: "", outageMs: 3000 },
  // A rate limiter refusing everything (429 + Retry-After: 1) for the first 1.5 s after the map
  // opens, then serving the map's pace: a storm at open, and pans that a client need not slow.
  { id: "ratelimit", title: "429 storm at open (1.5 s of 429 + Retry-After: 1), then served", q: "", outageMs: 1500, outage: { status: 429, retryAfter: 1 } },
  { id: "slow-tail", title: "heavy-tailed latency (Pareto 50 ms, α 0.8)", q: "tailms=50&alpha=0.8&tailmaxms=30000" },
  { id: "html", title: "20 % 200 + HTML error page", q: "f=html&p=0.2" },
  { id: "truncate", title: "10 % truncated body", q: "f=truncate&p=0.1" },
  // A server that sends no CORS headers (MapServer's CGI and GeoServer as they ship). Not for
  // MapLibre: WebGL draws no image its page cannot read, whoever loads it.
  { id: "nocors", title: "no CORS headers, healthy", q: "cors=0", libs: ["ol", "leaflet"] },
  { id: "nocors-503", title: "no CORS headers, 30 % 503", q: "cors=0&f=503&p=0.3", libs: ["ol", "leaflet"] },
  // A slow, healthy server: every answer after 2–3 s (a WMS rendering each GetMap, a tile server
  // under load), in place of the server's latency; a step may take 20 s, as a user waits for one.
  // The fault benchmark's slow-healthy server, so the two benches meet the same answers.
  {
    id: "slow",
    title: "slow, healthy (every answer 2–3 s)",
    latency: new URLSearchParams(scenarioById("slow-healthy").params).toString(),
    q: "",
    limitMs: scenarioById("slow-healthy").run.deadlineMs,
  },
];

export const LIBS = [
  { id: "ol", title: "OpenLayers", entry: "ol", webgl: false, spec: { kind: "xyz" } },
  { id: "leaflet", title: "Leaflet", entry: "leaflet", webgl: false, spec: {} },
  { id: "maplibre", title: "MapLibre", entry: "maplibre", webgl: true, spec: {} },
  // A globe: CesiumJS seen from above in 2D (Web Mercator). Cesium picks the imagery level a view
  // needs itself (here one or two levels coarser than the flat maps' zoom), so its view tiles are
  // the page's to say (`viewFromPage`: harness.viewKeys): the tiles of the level it shows, in the
  // view, as the first healthy run found them step by step, and every other run is judged on those
  // tiles, one pixel each where Cesium draws it (harness.samplePoints). The coarser levels and the
  // ring of tiles around the view that it asks for too count in its requests only. A view tile
  // that failed, where Cesium shows a coarser tile's imagery instead, is a hole.
  { id: "cesium", title: "CesiumJS", entry: "cesium", webgl: true, spec: {}, viewFromPage: true },
  { id: "deckgl", title: "deck.gl", entry: "deckgl", webgl: true, spec: {} },
];

const ZOOM = 12;

/** The script: open, 4 pans of 300–700 px in a seeded direction, then zoom in by one. */
export function script(seed = 11) {
  const rand = prng(seed);
  let center = [2048 * 256 + 128, 1360 * 256 + 77];
  let z = ZOOM;
  const steps = [{ action: "open", center, z }];
  for (let i = 0; i < 4; i++) {
    const angle = rand() * 2 * Math.PI;
    const dist = 300 + rand() * 400;
    center = [Math.round(center[0] + Math.cos(angle) * dist), Math.round(center[1] + Math.sin(angle) * dist)];
    steps.push({ action: "pan", center, z });
  }
  center = [center[0] * 2, center[1] * 2];
  z += 1;
  steps.push({ action: "zoom", center, z });
  return steps;
}

/**
 * In the page: does one step and waits until its tiles are loaded, or settled, or the limit.
 * `keys`: the view's tiles, or null when the page says which they are (harness.viewKeys, at
 * `level` when known; else null until the page knows, and no tiles if it never does).
 */
export async function stepInPage({ step, spec, keys: given, level, limitMs }) {
  const t0 = performance.now();
  if (step.action === "open") window.harness.create(spec);
  else window.harness.view(step.center, step.z);
  const keysNow = () => given ?? window.harness.viewKeys(step.center, step.z, level);
  let completeMs = null;
  for (;;) {
    const keys = keysNow();
    const states = window.harness.states();
    const st = (keys ?? []).map((k) => states[k]?.state);
    if (keys && st.every((s) => s === "loaded")) {
      completeMs = performance.now() - t0;
      break;
    }
    if ((keys && st.every((s) => s === "loaded" || s === "error" || s === "empty")) || performance.now() - t0 > limitMs) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const keys = keysNow() ?? [];
  const states = window.harness.states();
  return { completeMs, endedMs: performance.now() - t0, keys, states: keys.map((k) => states[k]?.state ?? "none") };
}

/**
 * One run: one library, one loader, one scenario, the whole script on a fresh page. `levels`: for
 * a library whose page says which tiles a view needs (`viewFromPage`), the tile level of each step
 * as a healthy run found it, so that a run under faults is judged on the same tiles; without it,
 * the page's own (each step of the result says its `level`).
 */
export async function runOne(env, lib, loader, scenario, round, levels = null) {
  // The same run name for both loaders, on a reset server: the seeded faults (hangs, 503s…) fall
  // on the same tiles and attempts for each, so their steps compare.
  env.srv.reset();
  const run = `mv-${lib.id}-${scenario.id}-${round}`;
  const q = [scenario.latency ?? LATENCY, scenario.q].filter(Boolean).join("&");
  const template = MAPPROXY_URL ? `${MAPPROXY_URL}/tiles/osm/webmercator/{z}/{x}/{y}.png` : `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}&${q}`;
  const page = await env.open();
  const steps = [];
  const profiler = CPU_PROFILE ? await stepProfiler(page) : null;
  try {
    if (RETURNING) await visitBefore(page, { ...lib.spec, own: loader === "own" }, template.replace(`run=${run}`, `run=${run}-before`));
    if (scenario.outageMs) env.srv.outage(run, scenario.outageMs, scenario.outage);
    for (const [i, step] of script().entries()) {
      const before = env.srv.requests(run);
      const spec = {
        ...lib.spec,
        template,
        zoom: step.z,
        center: step.center,
        own: loader === "own",
        platformLoader: loader === "own" ? undefined : PLATFORM_LOADER,
      };
      const given = lib.viewFromPage ? null : viewTiles(step.z, step.center).map((t) => t.key);
      const level = lib.viewFromPage ? (levels?.[i] ?? null) : null;
      const inPage = () => page.evaluate(stepInPage, { step, spec, keys: given, level, limitMs: scenario.limitMs ?? STEP_LIMIT_MS });
      const { value: r, cpu } = profiler ? await profiler.measure(inPage) : { value: await inPage(), cpu: undefined };
      await sleep(120); // a frame or two to draw the last tile
      // The adapter's concurrency limit at the step's end (see maxInFlight in stats()).
      const maxInFlight = loader === "own" || PLATFORM_LOADER ? null : await page.evaluate(() => window.__defaultClientMaxInFlight?.() ?? null);
      const tiles = r.keys.map((key) => {
        const [z, x, y] = key.split("/").map(Number);
        return { z, x, y, key };
      });
      if (MAPPROXY_URL) {
        const holes = r.states.filter((st) => st !== "loaded").length;
        steps.push({
          action: step.action,
          tiles: tiles.length,
          level: tiles[0]?.z ?? null,
          completeMs: r.completeMs,
          endedMs: r.endedMs,
          holes,
          wrong: null,
          requests: null,
          cpu,
        });
        continue;
      }
      const points = lib.viewFromPage
        ? await page.evaluate((keys) => window.harness.samplePoints(keys), r.keys)
        : viewTiles(step.z, step.center).map((t) => samplePoint(t));
      const sampled = tiles.map((t, i) => ({ t, i, p: points[i] })).filter((s) => s.p !== null);
      const pixels = await readPixels(
        page,
        sampled.map((s) => s.p),
      );
      let holes = 0;
      let wrong = 0;
      sampled.forEach(({ t, i }, k) => {
        const want = tileColour(t.z, t.x, t.y);
        const drawn = !want.some((c, j) => Math.abs(c - pixels[k][j]) > 6);
        if (drawn) return;
        if (r.states[i] === "loaded") wrong++;
        else holes++;
      });
      steps.push({
        action: step.action,
        tiles: sampled.length,
        level: tiles[0]?.z ?? null,
        completeMs: r.completeMs !== null && holes === 0 && wrong === 0 ? r.completeMs : null,
        endedMs: r.endedMs,
        holes,
        wrong,
        requests: env.srv.requests(run) - before,
        maxInFlight,
        cpu,
      });
    }
  } finally {
    await page.closeContext();
  }
  // The distinct tiles the server was asked for: requests beyond them are the same tile again
  // (a retry, a hedge, a timeout's second try), whatever the library asks for around the view.
  const tilesAsked = MAPPROXY_URL ? null : new Set(env.srv.log.filter((e) => e.key.startsWith(`${run}/`)).map((e) => e.key)).size;
  return { lib: lib.id, loader, scenario: scenario.id, round, steps, requests: MAPPROXY_URL ? null : env.srv.requests(run), tilesAsked, returning: RETURNING };
}

async function main() {
  const server = SERVERS[opt("server", "public")];
  if (!server) throw new Error(`--server: one of ${Object.keys(SERVERS).join(", ")}`);
  const protocol = opt("protocol", "h1");
  if (protocol !== "h1" && protocol !== "h2") throw new Error("--protocol: h1 or h2");
  if (protocol === "h2" && server === SERVERS.mapproxy) throw new Error("--protocol h2: the fault server's only (MapProxy serves HTTP/1.1 here)");
  const viewport = opt("viewport", null);
  if (viewport !== null) {
    const m = /^(\d+)x(\d+)$/.exec(viewport);
    if (!m) throw new Error("--viewport: WIDTHxHEIGHT in CSS px, such as 1792x1024");
    setMapSize(Number(m[1]), Number(m[2]));
  }
  CPU_PROFILE = opt("cpu-profile", null) !== null;
  PLATFORM_LOADER = opt("platform-loader", null);
  if (PLATFORM_LOADER !== null) {
    if (PLATFORM_LOADER !== "fetch" && PLATFORM_LOADER !== "worker") throw new Error("--platform-loader: fetch or worker");
    if (opt("libs", "") !== "leaflet") throw new Error("--platform-loader: Leaflet's only (--libs leaflet)");
    // The layer has no retry and no image fallback: a healthy server only, and no earlier visit.
    if ((server.scenarios ?? opt("scenarios", "").split(",")).join(",") !== "ok") throw new Error("--platform-loader: healthy runs only (--scenarios ok)");
    if (server.returning) throw new Error("--platform-loader: not with a returning visit (--server fast-returning)");
  }
  const mapproxy = server === SERVERS.mapproxy ? await startMapProxy() : null;
  try {
    useServer(server, mapproxy?.url ?? null);
    // One tile first: MapProxy's first request starts its WSGI app.
    if (mapproxy) await fetch(`${mapproxy.url}/tiles/osm/webmercator/0/0/0.png`).then((r) => r.arrayBuffer());
    await runAll(server, { tls: protocol === "h2" ? loopbackCertificate() : null, viewport });
  } finally {
    await mapproxy?.stop();
  }
}

/** Every library, scenario and round of `server`; writes its JSON. */
async function runAll(server, { tls = null, viewport = null } = {}) {
  const libs = opt("libs", (server.libs ?? LIBS.map((l) => l.id)).join(",")).split(",");
  const scenarioIds = server.scenarios ?? opt("scenarios", MAP_SCENARIOS.map((s) => s.id).join(",")).split(",");
  // The set-ups of a viewport or HTTP/2 bound each step's median too (RESULTS.md "Map view over
  // HTTP/2 and at full screen"): 12 rounds, as the fast server, where a step's median over 6 moved
  // by more than that bound's margin from run to run.
  const healthyRounds = Number(opt("healthy-rounds", server.healthyRounds ?? (tls || viewport ? 12 : 6)));
  // Each round of a fault scenario is a run of its own name, so its seeded faults fall elsewhere.
  const faultRounds = Number(opt("fault-rounds", 1));
  const runs = [];
  const levelsOf = {}; // library → the tile level of each step, where the page says it
  const t0 = Date.now();
  for (const lib of LIBS.filter((l) => libs.includes(l.id))) {
    const env = await setUp(lib.entry, { webgl: lib.webgl, tls });
    try {
      // The view's tile level per step, for a library whose page says it: found by a healthy run
      // of the own loader first (not counted), so that every run is judged on the same tiles and
      // none waits for the page to find them.
      let levels = null;
      if (lib.viewFromPage) {
        for (let attempt = 1; attempt <= 3 && !levels; attempt++) {
          const probe = await runOne(env, lib, "own", MAP_SCENARIOS[0], `levels${attempt}`);
          if (probe.steps.every((s) => s.completeMs !== null)) levels = probe.steps.map((s) => s.level);
        }
        if (!levels) {
          // Not fatal to the other libraries' runs: this one is left out, and says so.
          process.stderr.write(`  ${lib.id.padEnd(8)} left out: 3 healthy runs did not complete every step, so its view's tiles are unknown\n`);
          continue;
        }
        levelsOf[lib.id] = levels;
        process.stderr.write(`  ${lib.id.padEnd(8)} tile level per step, as the page shows it: ${levels.join(" ")}\n`);
      }
      for (const scenario of MAP_SCENARIOS.filter((s) => scenarioIds.includes(s.id) && (!s.libs || s.libs.includes(lib.id)))) {
        const rounds = scenario.id === "ok" ? healthyRounds : faultRounds;
        for (let round = 0; round < rounds; round++) {
          // Alternating which loader goes first: neither always gets the warmer browser.
          const order = round % 2 === 0 ? ["own", "tilefetch"] : ["tilefetch", "own"];
          for (const loader of order) {
            const r = await runOne(env, lib, loader, scenario, round, levels);
            runs.push(r);
            const done = r.steps.filter((s) => s.completeMs !== null);
            const sum = (f) => r.steps.reduce((n, s) => n + f(s), 0);
            const perTile = r.tilesAsked ? ` (${(r.requests / r.tilesAsked).toFixed(2)} per tile asked)` : "";
            const mid = done.length ? `median ${Math.round(median(done.map((s) => s.completeMs)))} ms, ` : "";
            process.stderr.write(
              `  ${lib.id.padEnd(8)} ${scenario.id.padEnd(10)} ${loader.padEnd(9)} ${done.length}/${r.steps.length} steps complete, ` +
                `${sum((s) => s.holes)} holes, ${sum((s) => s.wrong)} wrong, ${r.requests} requests${perTile}; ` +
                `step ms ${mid}${r.steps.map((s) => (s.completeMs === null ? "—" : Math.round(s.completeMs))).join(" ")}` +
                (loader === "own" ? "" : `; limit ${r.steps.map((s) => s.maxInFlight ?? "?").join(" ")}`) +
                "\n",
            );
          }
        }
      }
    } finally {
      await env.close();
    }
  }
  const command = ["node bench/mapview.mjs", ...process.argv.slice(2)].join(" ");
  const out = {
    command,
    stepLimitMs: STEP_LIMIT_MS,
    protocol: tls ? "h2" : "h1",
    viewport: viewport ?? "768x512",
    platformLoader: PLATFORM_LOADER,
    cpuProfile: CPU_PROFILE,
    levels: levelsOf,
    server: opt("server", "public"),
    latency: LATENCY,
    script: script(),
    scenarios: MAP_SCENARIOS,
    libs: LIBS,
    totalMs: Date.now() - t0,
    runs,
  };
  fs.mkdirSync(path.join(HERE, "out"), { recursive: true });
  const suffix = `${tls ? "-h2" : ""}${viewport ? `-${viewport}` : ""}${PLATFORM_LOADER ? `-platform-${PLATFORM_LOADER}` : ""}${CPU_PROFILE ? "-cpu" : ""}`;
  const file = path.join(HERE, "out", server.out.replace(/\.json$/, `${suffix}.json`));
  if (opt("merge", null) !== null && fs.existsSync(file)) {
    // --merge: these libraries' runs replace theirs in the file; the others' stay as they were.
    const before = JSON.parse(fs.readFileSync(file, "utf8"));
    out.runs = [...before.runs.filter((r) => !libs.includes(r.lib)), ...runs];
    out.levels = { ...before.levels, ...levelsOf };
    out.totalMs = before.totalMs;
    out.merged = [...(before.merged ?? []), { libs, ms: Date.now() - t0, command }];
    // The file's command stays the run that made it; each merge's is in `merged`.
    out.command = before.command;
  }
  fs.writeFileSync(file, JSON.stringify(out, null, 1));
  process.stderr.write(
    `map view benchmark: ${runs.length} runs in ${Math.round((Date.now() - t0) / 1000)} s, written to ${path.relative(process.cwd(), file)}\n`,
  );
  if (CPU_PROFILE) process.stderr.write(busyLines(runs));
  process.stderr.write(`reproduce: ${command}\n`);
}

/** Per library and loader of healthy `runs` with a CPU profile: each step's busy ms, median over rounds. */
function busyLines(runs) {
  const lines = ["page busy ms per step (median over rounds), healthy:"];
  for (const lib of new Set(runs.map((r) => r.lib))) {
    for (const loader of ["own", "tilefetch"]) {
      const mine = runs.filter((r) => r.lib === lib && r.loader === loader && r.scenario === "ok" && r.steps.every((s) => s.cpu));
      if (mine.length === 0) continue;
      const perStep = mine[0].steps.map((_, i) => Math.round(median(mine.map((r) => r.steps[i].cpu.busyMs))));
      const arm = loader === "own" ? "own" : PLATFORM_LOADER ? `platform-${PLATFORM_LOADER}` : "tilefetch";
      lines.push(`  ${lib.padEnd(8)} ${arm.padEnd(16)} ${perStep.join(" ")} (${mine.length} rounds)`);
    }
  }
  return `${lines.join("\n")}\n`;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
