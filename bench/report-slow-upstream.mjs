// The "Slow upstreams and fixed windows" section of bench/RESULTS.md, from
// bench/out/slow-upstream.json (bench/slow-upstream.mjs). Every figure and verdict is computed here.
import { table } from "./markdown.mjs";

/** The targets of issue "Slow is not failed". */
export const SLOW_TARGETS = { requestsPerTile: 1.1, refusedShare: 0.01, floorRatio: 1.1 };

const fixed = (n, d) => (n == null ? "—" : n.toFixed(d));

/**
 * @param data bench/out/slow-upstream.json, or null
 * @param lose `(section, text)`: records a missed target for "Where tilefetch loses"
 * @returns {string[]}
 */
export function slowUpstreamSection(data, lose) {
  const md = ["## Slow upstreams and fixed windows (Node, workerd)", ""];
  if (!data) {
    md.push("Not run (bench/out/slow-upstream.json is missing).", "");
    return md;
  }
  const s = data.setup;
  md.push(
    `Command: \`${data.command}\`. **slow**: every answer of the loopback fault server after 2–3 s (\`${s.slowQuery}\`), healthy; ` +
      `${s.slowTiles} tiles asked at once of one host, through a default \`TileClient\` in Node (each call aborted after ${s.slowLimitMs / 1000} s) ` +
      `and through the edge proxy with its defaults (one workerd isolate, the UpstreamGate bound). **window**: ${s.windowQuota} requests per ` +
      `fixed window of ${s.windowS} s stated in the draft's fields, 429 + Retry-After past it; ${s.windowTiles} tiles, ${s.windowConcurrency} at a time, ` +
      `through the edge proxy with its defaults and ${s.windowIsolates} isolates sharing the gate; the windows' floor is ${fixed(s.windowFloorMs / 1000, 1)} s. ` +
      "Node's clients meet the same window in the fault benchmark's `fixed-window` scenario.",
    "",
  );
  const rows = [];
  const where = "slow upstreams and fixed windows";
  for (const [name, label] of [
    ["slowNode", "slow, Node, default TileClient"],
    ["slowEdge", "slow, edge proxy"],
    ["windowEdge", `window, edge proxy, ${s.windowIsolates} isolates`],
  ]) {
    for (const [i, r] of data.runs[name].entries()) {
      const share = r.upstream ? r.refused / r.upstream : 0;
      rows.push([
        `${label} (run ${i + 1})`,
        `${r.delivered}/${r.tiles}`,
        r.upstream,
        fixed(r.perTile, 2),
        name === "windowEdge" ? `${r.refused} (${fixed(100 * share, 1)} %)` : "—",
        fixed(r.wallMs / 1000, 2),
        Object.entries(r.failures)
          .map(([k, n]) => `${n} × ${k}`)
          .join(", ") || "—",
      ]);
      const missed = [];
      if (r.delivered < r.tiles) missed.push(`${r.delivered}/${r.tiles} delivered`);
      if (name !== "windowEdge" && r.perTile > SLOW_TARGETS.requestsPerTile)
        missed.push(`${fixed(r.perTile, 2)} requests per tile (≤ ${SLOW_TARGETS.requestsPerTile})`);
      if (name === "windowEdge" && share > SLOW_TARGETS.refusedShare) missed.push(`${fixed(100 * share, 1)} % 429s (≤ 1 %)`);
      if (name === "windowEdge" && r.wallMs > SLOW_TARGETS.floorRatio * s.windowFloorMs) {
        missed.push(`${fixed(r.wallMs / 1000, 2)} s (≤ ${SLOW_TARGETS.floorRatio} × the floor)`);
      }
      if (missed.length) lose(where, `**target missed**: ${label}, run ${i + 1}: ${missed.join("; ")}`);
    }
  }
  md.push(table(["run", "delivered", "upstream requests", "per tile", "upstream 429s", "wall s", "failed"], rows), "");
  return md;
}
