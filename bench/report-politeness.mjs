// The "In flight at a server under strain" table of bench/RESULTS.md, from bench/out/fault.json
// (bench/fault.mjs): issue "Never slower than the map's own loader"'s last item, that the adaptive
// concurrency limit never sends a server stating a quota, or answering 429/503, more at once than
// the fixed limit it replaced. Every figure and verdict is computed here.
import { table } from "./markdown.mjs";

/** The fault scenarios where the server states a quota or answers 429 or 503. */
export const STRAINED = [
  "flaky-503",
  "bucket-429",
  "bucket-429-date",
  "stated-quota",
  "retry-after-86400",
  "retry-after-absurd",
  "outage",
  "outage-3500",
  "fixed-window",
];
const ADAPTIVE = "tilefetch-client";
const FIXED = "tilefetch-client16";

/**
 * @param fault bench/out/fault.json, or null
 * @param lose `(section, text)`: records a missed target for "Where tilefetch loses"
 * @returns {string[]}
 */
export function politenessSection(fault, lose) {
  const md = ["### In flight at a server under strain", ""];
  if (!fault) return [...md, "Not run (bench/out/fault.json is missing).", ""];
  md.push(
    "The most requests the server had open at once (`peakConcurrent` of the fault server) in each scenario where it states a " +
      `quota or answers 429 or 503, from \`${ADAPTIVE}\` (the default: the adaptive limit per host) and from \`${FIXED}\` (\`maxConcurrent: 16\`, ` +
      "the default's number fixed, as before the adaptive limit). Target: the adaptive default never more. Where the server answers " +
      "at once the figure is 1 for every client (a request is answered before the next arrives); the outages answer after 100 ms.",
    "",
  );
  const rows = [];
  for (const id of STRAINED) {
    const of = (client) => fault.runs.find((r) => r.scenario === id && r.client === client);
    const [adaptive, fixed] = [of(ADAPTIVE), of(FIXED)];
    if (!adaptive || !fixed) continue;
    const met = adaptive.peakInFlight <= fixed.peakInFlight;
    rows.push([id, String(adaptive.peakInFlight), String(fixed.peakInFlight), met ? "met" : "**missed**", `${adaptive.requests} / ${fixed.requests}`]);
    if (!met) lose(`fault: ${id}`, `the adaptive limit had ${adaptive.peakInFlight} requests open at once where a fixed 16 had ${fixed.peakInFlight}`);
  }
  md.push(table(["scenario", "open at once, adaptive (default)", "open at once, fixed 16", "never more", "requests, adaptive / fixed"], rows), "");
  return md;
}
