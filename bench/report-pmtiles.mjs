// The "PMTiles archives" section of bench/RESULTS.md, from bench/out/pmtiles.json
// (bench/pmtiles.mjs). Every figure and verdict is computed here.
import { int, table } from "./markdown.mjs";
import { median } from "./stats.mjs";

/** The targets of issue "Cloud-optimized tile archives": healthy wall time within 5 % of FetchSource. */
export const PMTILES_TARGETS = { healthyWallRatio: 1.05 };

/**
 * @param data bench/out/pmtiles.json, or null
 * @param lose `(section, text)`: records a missed target for "Where tilefetch loses"
 * @returns {string[]}
 */
export function pmtilesSection(data, lose) {
  const md = ["## PMTiles archives (Node)", ""];
  if (!data) {
    md.push("Not run (bench/out/pmtiles.json is missing).", "");
    return md;
  }
  const a = data.archive;
  md.push(
    `Command: \`${data.command}\`. Every tile of a z0–z${a.maxzoom} raster archive (${a.tiles} tiles, ${int(a.bytes)} B, written by ${a.writer}) ` +
      "read at once through `PMTiles.getZxy` of the `pmtiles` package, from the loopback static-storage server " +
      "(`tests/pmtiles/archive-server.mjs`: byte ranges, a strong ETag), through `PMTilesSource` (a fresh default `TileClient` per run) and " +
      "through pmtiles' own `FetchSource`; the two alternate. **healthy-30ms**: every answer 30 ms late. **faults**: 20 % 503, 5 % connection " +
      "resets, 5 % bodies cut halfway, from the header request on. **header-fails**: the first request (the header) answered 503. " +
      "Identical: tiles whose bytes equal the archive's. In the healthy scenarios a third reader, `PMTilesSource` on a client with " +
      "`maxConcurrent: 512`, separates the per-host limit (16 at once at first contact; it grows only after a second of answers) " +
      "from the work per call.",
    "",
  );
  const rows = [];
  const where = "PMTiles archives";
  for (const scenario of data.scenarios) {
    const bySource = {};
    for (const source of ["PMTilesSource", "FetchSource", "PMTilesSource, maxConcurrent 512"]) {
      const runs = data.runs.filter((r) => r.scenario === scenario.id && r.source === source);
      if (!runs.length) continue;
      const sum = (f) => runs.reduce((s, r) => s + r[f], 0);
      bySource[source] = { runs, wall: median(runs.map((r) => r.wallMs)), requests: median(runs.map((r) => r.requests)) };
      rows.push([
        scenario.id,
        `\`${source}\``,
        String(runs.length),
        `${sum("identical")} / ${sum("tiles")}`,
        String(sum("failed")),
        `${Math.min(...runs.map((r) => r.requests))}–${Math.max(...runs.map((r) => r.requests))}`,
        int(bySource[source].wall),
        `${int(Math.min(...runs.map((r) => r.wallMs)))}–${int(Math.max(...runs.map((r) => r.wallMs)))}`,
      ]);
      if (source === "PMTilesSource" && sum("identical") !== sum("tiles")) {
        lose(where, `${scenario.id}: PMTilesSource delivered ${sum("identical")} of ${sum("tiles")} tiles byte-identical`);
      }
    }
    const ours = bySource.PMTilesSource;
    const own = bySource.FetchSource;
    if (scenario.id.startsWith("healthy") && ours && own) {
      const ratio = ours.wall / own.wall;
      const at = rows.findIndex((r) => r[0] === scenario.id && r[1] === "`PMTilesSource`");
      rows[at].push(`${ratio.toFixed(2)}×, requests ${ours.requests} vs ${own.requests}`);
      const unbounded = bySource["PMTilesSource, maxConcurrent 512"];
      if (unbounded) rows.at(-1).push(`${(unbounded.wall / own.wall).toFixed(2)}×`);
      if (ratio > PMTILES_TARGETS.healthyWallRatio) {
        lose(
          where,
          `${scenario.id}: median wall ${int(ours.wall)} ms vs FetchSource ${int(own.wall)} ms (${ratio.toFixed(2)}×; target ≤ ${PMTILES_TARGETS.healthyWallRatio})`,
        );
      }
      if (ours.requests !== own.requests) lose(where, `${scenario.id}: ${ours.requests} requests vs FetchSource ${own.requests}`);
    }
  }
  for (const r of rows) while (r.length < 9) r.push("");
  md.push(
    table(
      ["scenario", "source", "runs", "identical", "failed", "requests per run", "median wall (ms)", "wall range (ms)", "median wall / FetchSource's (healthy)"],
      rows,
    ),
    "",
  );
  return md;
}
