#!/usr/bin/env node
// Where a tile's time goes in the map view, own loader against adapter: the map-view benchmark's
// healthy script (bench/mapview.mjs) on the fast fault server (0–5 ms), and per tile, from the
// page's Resource Timing and the harness's records: **issue**, from the library asking for the
// tile (tileloadstart) to its request starting; **net**, the request, start to response end;
// **after**, from the response end to the library's "loaded". Tiles of the open step apart from
// the later steps' (the open step pays the module's start and, in the OpenLayers and Leaflet
// adapters, the first contact with an origin: docs/map-libraries.md). Writes
// bench/out/mapview-phases.json. OpenLayers and Leaflet: MapLibre's own loader fetches its tiles in
// its worker, whose requests the page's Resource Timing does not list.
//
//   node bench/mapview-phases.mjs [--libs ol,leaflet] [--rounds 6]
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setUp } from "../tests/browser/adapters-common.mjs";
import { option } from "./cli.mjs";
import { LIBS, MAP_SCENARIOS, SERVERS, runOne, useServer } from "./mapview.mjs";
import { median } from "./stats.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PHASES = ["issue", "net", "after"];

/** In the page, after a run: each loaded tile's phases, and whether it was asked for by the open step. */
function tilePhases() {
  const records = window.harness.states();
  const entries = performance.getEntriesByType("resource").filter((e) => e.name.includes("/tile/"));
  const first = Math.min(...Object.values(records).map((r) => r.t0 ?? Number.POSITIVE_INFINITY));
  const out = [];
  for (const [key, r] of Object.entries(records)) {
    const e = entries.filter((x) => x.name.includes(`/tile/${key}.png`)).at(-1);
    if (!e || r.t1 === null || r.state !== "loaded") continue;
    // The open step's tiles are asked for within its first frames.
    out.push({ open: r.t0 < first + 30, issue: e.startTime - r.t0, net: e.responseEnd - e.startTime, after: r.t1 - e.responseEnd });
  }
  return out;
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : null;
};

async function main() {
  const libs = option("libs", "ol,leaflet").split(",");
  const rounds = Number(option("rounds", 6));
  useServer(SERVERS.fast);
  const healthy = MAP_SCENARIOS.find((s) => s.id === "ok");
  const out = { server: "fast", latency: SERVERS.fast.latency, rounds, libs: {} };
  for (const lib of LIBS.filter((l) => libs.includes(l.id))) {
    const env = await setUp(lib.entry, { webgl: lib.webgl });
    const tiles = { own: [], tilefetch: [] };
    let loader;
    const open = env.open;
    env.open = async () => {
      const page = await open();
      const close = page.closeContext;
      page.closeContext = async () => {
        tiles[loader].push(...(await page.evaluate(tilePhases)));
        await close();
      };
      return page;
    };
    try {
      for (let round = 0; round < rounds; round++) {
        for (loader of round % 2 === 0 ? ["own", "tilefetch"] : ["tilefetch", "own"]) await runOne(env, lib, loader, healthy, round);
      }
    } finally {
      await env.close();
    }
    out.libs[lib.id] = {};
    for (const [name, rows] of Object.entries(tiles)) {
      out.libs[lib.id][name] = {};
      for (const step of ["open", "later"]) {
        const of = rows.filter((r) => r.open === (step === "open"));
        out.libs[lib.id][name][step] = {
          tiles: of.length,
          ...Object.fromEntries(
            PHASES.map((p) => [
              p,
              {
                p50: median(of.map((r) => r[p])),
                p90: quantile(
                  of.map((r) => r[p]),
                  0.9,
                ),
              },
            ]),
          ),
        };
        const s = out.libs[lib.id][name][step];
        process.stderr.write(
          `  ${lib.id.padEnd(8)} ${name.padEnd(9)} ${step.padEnd(5)} ${String(s.tiles).padStart(3)} tiles; ms p50/p90: ${PHASES.map((p) => `${p} ${s[p].p50?.toFixed(1)}/${s[p].p90?.toFixed(1)}`).join("  ")}\n`,
        );
      }
    }
  }
  fs.mkdirSync(path.join(HERE, "out"), { recursive: true });
  fs.writeFileSync(path.join(HERE, "out/mapview-phases.json"), JSON.stringify(out, null, 1));
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
