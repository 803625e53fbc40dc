#!/usr/bin/env node
// When a map's first tile request leaves, through each adapter against the library's own loader,
// in the same page set-up: the page built by Vite as a site ships it (its HTML asked again each
// visit, its hashed assets and a library's own build kept by the browser: SITE_CACHING), opened
// at an address that makes the map as the page's own script would, once its modules have run.
// The adapters' module is fetched and compiled from the moment tilefetch is imported, in the
// background: a tile asked for before it is ready waits for it. Each round opens a fresh browser
// context twice: cold (an empty HTTP cache) and warm (the same page again, its assets cached, and
// what the adapters learned of the tile server's CORS headers on the first visit kept), each
// visit on tiles of its own. Loaders alternate first from round to round. Times from the page's
// navigation start (Resource Timing): the map asking for its first tile (the harness's record),
// the first tile request's start, and the module's own request. Healthy fault server, 0–5 ms.
// Writes bench/out/first-request.json.
//
//   node bench/first-request.mjs [--rounds 10] [--libs ol,leaflet,maplibre,cesium,deckgl]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { MAP_H, MAP_W, SITE_CACHING, setUp, sleep } from "../tests/browser/adapters-common.mjs";
import { failedLoadFrom, newCheckedPage } from "../tests/browser/helpers.mjs";
import { option } from "./cli.mjs";
import { LIBS, script } from "./mapview.mjs";
import { median } from "./stats.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const VISITS = ["cold", "warm"];
const LOADERS = ["own", "adapter"];
// How long a visit waits for its first tile requests to end (Resource Timing lists a request
// once it has ended) after the first one is listed.
const SETTLE_MS = 300;
const VISIT_LIMIT_MS = 15_000;

/** In the page: what the visit measured, once a tile request has ended (or null until then). */
function measured() {
  const resources = performance.getEntriesByType("resource");
  const tiles = resources.filter((e) => new URL(e.name).pathname.startsWith("/tile/"));
  if (tiles.length === 0) return null;
  const asked = Object.values(window.harness.states())
    .map((r) => r.t0)
    .filter((t) => t !== null);
  const wasm = resources.find((e) => e.name.endsWith(".wasm"));
  return {
    createdMs: window.__createdAt ?? null,
    moduleReadyMs: window.__moduleReadyAt ?? null,
    askedMs: asked.length ? Math.min(...asked) : null,
    requestMs: Math.min(...tiles.map((e) => e.startTime)),
    wasm: wasm ? { startMs: wasm.startTime, endMs: wasm.responseEnd, transferSize: wasm.transferSize } : null,
  };
}

async function visit(env, page, lib, loader, run) {
  const [step] = script();
  const spec = {
    ...lib.spec,
    template: `${env.srv.url}/tile/{z}/{x}/{y}.png?run=${run}&delay=0&delayjitter=5`,
    zoom: step.z,
    center: step.center,
    own: loader === "own",
  };
  await page.goto(`${env.web.url}/${lib.entry}.html?create=${encodeURIComponent(JSON.stringify(spec))}`);
  await page.waitForFunction(measured, null, { timeout: VISIT_LIMIT_MS, polling: 20 });
  await sleep(SETTLE_MS);
  const m = await page.evaluate(measured);
  if (m.createdMs === null) throw new Error(`${lib.id}: the page did not make its map at start`);
  return m;
}

async function runLib(lib, rounds) {
  const env = await setUp(lib.entry, { webgl: lib.webgl, cacheControl: SITE_CACHING });
  const runs = [];
  try {
    const viewport = { width: Math.max(900, MAP_W + 132), height: Math.max(640, MAP_H + 128) };
    for (let round = 0; round < rounds; round++) {
      for (const loader of round % 2 ? [...LOADERS].reverse() : LOADERS) {
        const page = await newCheckedPage(env.browser, { expectedConsoleError: failedLoadFrom(env.srv.url), viewport });
        try {
          for (const v of VISITS) {
            const m = await visit(env, page, lib, loader, `fr-${lib.id}-${round}-${loader}-${v}`);
            runs.push({ lib: lib.id, loader, visit: v, round, ...m });
          }
          const problems = page.problems();
          if (problems.length) throw new Error(`${lib.id} ${loader}: ${problems.join("\n")}`);
        } finally {
          await page.closeContext();
        }
      }
    }
  } finally {
    await env.close();
  }
  return runs;
}

/** Per visit: the medians, and of the rounds' adapter − own differences of the first request. */
export function summarise(runs, libId) {
  const out = {};
  for (const v of VISITS) {
    const of = (loader) => runs.filter((r) => r.lib === libId && r.visit === v && r.loader === loader);
    const own = of("own");
    const adapter = of("adapter");
    const later = adapter.map((a) => a.requestMs - (own.find((o) => o.round === a.round)?.requestMs ?? Number.NaN)).filter(Number.isFinite);
    const mid = (rs, f) => median(rs.map(f).filter((x) => x !== null && Number.isFinite(x)));
    out[v] = {
      rounds: later.length,
      ownRequestMs: mid(own, (r) => r.requestMs),
      adapterRequestMs: mid(adapter, (r) => r.requestMs),
      laterMs: median(later),
      laterRange: [Math.min(...later), Math.max(...later)],
      ownAskedMs: mid(own, (r) => r.askedMs),
      adapterAskedMs: mid(adapter, (r) => r.askedMs),
      wasmEndMs: mid(adapter, (r) => r.wasm?.endMs ?? null),
      moduleReadyMs: mid(adapter, (r) => r.moduleReadyMs),
      wasmFromCache: adapter.filter((r) => r.wasm && r.wasm.transferSize === 0).length,
    };
  }
  return out;
}

async function main() {
  const rounds = Number(option("rounds", "10"));
  const ids = option("libs", LIBS.map((l) => l.id).join(",")).split(",");
  const libs = ids.map((id) => {
    const lib = LIBS.find((l) => l.id === id);
    if (!lib) throw new Error(`--libs: no library "${id}" (${LIBS.map((l) => l.id).join(", ")})`);
    return lib;
  });
  const t0 = Date.now();
  const runs = [];
  for (const lib of libs) {
    runs.push(...(await runLib(lib, rounds)));
    const s = summarise(runs, lib.id);
    for (const v of VISITS) {
      const r = s[v];
      console.log(
        `${lib.id.padEnd(8)} ${v}: first tile request at ${r.ownRequestMs.toFixed(1)} ms (own) vs ${r.adapterRequestMs.toFixed(1)} ms (adapter): ` +
          `${r.laterMs.toFixed(1)} ms later (${r.laterRange.map((x) => x.toFixed(1)).join(" to ")}, ${r.rounds} rounds); ` +
          `map asked at ${r.ownAskedMs?.toFixed(1)} / ${r.adapterAskedMs?.toFixed(1)} ms; module fetched by ${r.wasmEndMs?.toFixed(1)} ms, ${r.wasmFromCache}/${r.rounds} from cache, the map's calls gone on by ${r.moduleReadyMs?.toFixed(1)} ms`,
      );
    }
  }
  const titles = Object.fromEntries(libs.map((l) => [l.id, l.title]));
  const out = { rounds, libs: ids, titles, settleMs: SETTLE_MS, runs, totalMs: Date.now() - t0 };
  fs.mkdirSync(path.join(HERE, "out"), { recursive: true });
  fs.writeFileSync(path.join(HERE, "out", "first-request.json"), JSON.stringify(out, null, 1));
  console.log(`reproduce: ${["node bench/first-request.mjs", ...process.argv.slice(2)].join(" ")}`);
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
