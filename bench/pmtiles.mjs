// PMTiles archives through PMTilesSource beside pmtiles' own FetchSource, in Node: every tile of
// a z0–z4 raster archive (341, written by the PyPI `pmtiles` tools) read at once through
// `PMTiles.getZxy`, from the loopback static-storage server (tests/pmtiles/archive-server.mjs):
//
//   healthy        no fault; and the same with every answer 30 ms late (a storage round trip)
//   faults         20 % 503, 5 % connection resets, 5 % bodies cut halfway, from the header on
//   header-fails   the first request (the archive's header) answered 503, then healthy
//
// Counted per run: tiles delivered byte-identical to the archive's, tiles failed, requests, wall
// time. PMTilesSource runs on a fresh default TileClient each run; the sources alternate. In the
// healthy scenarios a third reader, PMTilesSource on a client with `maxConcurrent: 512`, shows
// what of the difference is the per-host limit (16 at first contact) and what the work per call.
// Prints each run, then the section bench/report.mjs makes of it. Writes bench/out/pmtiles.json.
//   node bench/pmtiles.mjs [--runs 5]
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { FetchSource, PMTiles } from "pmtiles";
import { PMTilesSource } from "../pkg/pmtiles.js";
import { TileClient } from "../pkg/node.js";
import { startArchiveServer } from "../tests/pmtiles/archive-server.mjs";
import { makeArchive, readEvery, referenceTiles } from "../tests/pmtiles/archives.mjs";
import { option } from "./cli.mjs";
import { OUT } from "./bundle.mjs";
import { pmtilesSection } from "./report-pmtiles.mjs";

const COMMAND = "node bench/pmtiles.mjs";
const RUNS = Number(option("runs", "5"));
const MAXZOOM = 4;
const UNBOUNDED = "PMTilesSource, maxConcurrent 512";
export const PMTILES_SCENARIOS = [
  { id: "healthy", query: "" },
  { id: "healthy-30ms", query: "delay=30" },
  { id: "faults", query: "p503=0.2&preset=0.05&pcut=0.05" },
  { id: "header-fails", query: "fail=1" },
];

const archive = makeArchive({ maxzoom: MAXZOOM });
const reference = await referenceTiles(archive, MAXZOOM);
const server = await startArchiveServer({ "world.pmtiles": archive });
const runs = [];
try {
  for (const scenario of PMTILES_SCENARIOS) {
    for (let i = 0; i < RUNS; i++) {
      const order = i % 2 === 0 ? ["PMTilesSource", "FetchSource"] : ["FetchSource", "PMTilesSource"];
      if (scenario.id.startsWith("healthy")) order.push(UNBOUNDED);
      for (const source of order) {
        const run = `${scenario.id}-${source}-${i}`;
        const url = `${server.url}/world.pmtiles?run=${run}&seed=${i + 1}${scenario.query ? `&${scenario.query}` : ""}`;
        const config = source === UNBOUNDED ? { maxConcurrent: 512 } : {};
        const reader = new PMTiles(source === "FetchSource" ? new FetchSource(url) : new PMTilesSource(url, { client: new TileClient(config) }));
        const t0 = performance.now();
        const { delivered, failed } = await readEvery(reader, MAXZOOM);
        const wallMs = performance.now() - t0;
        let identical = 0;
        for (const [key, bytes] of delivered) if (bytes.equals(reference.get(key))) identical++;
        const result = {
          scenario: scenario.id,
          source,
          seed: i + 1,
          tiles: reference.size,
          delivered: delivered.size,
          identical,
          failed: failed.size,
          requests: server.requests(run),
          faults: server.log.filter((e) => e.run === run && e.fault !== "none").length,
          wallMs,
        };
        runs.push(result);
        console.log(JSON.stringify(result));
      }
    }
  }
} finally {
  await server.close();
}

const data = {
  command: `${COMMAND} --runs ${RUNS}`,
  archive: { maxzoom: MAXZOOM, tiles: reference.size, bytes: archive.length, writer: "PyPI pmtiles 3.8.1 (tests/pmtiles/make-archive.py)" },
  scenarios: PMTILES_SCENARIOS,
  runs,
};
fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(path.join(OUT, "pmtiles.json"), `${JSON.stringify(data, null, 2)}\n`);
console.log(pmtilesSection(data, (where, text) => console.log(`target missed (${where}): ${text}`)).join("\n"));
