// The section of bench/RESULTS.md on the map view in the set-ups most users have: a full-screen
// view (1792×1024) and a tile server over HTTPS with HTTP/2, as any tile CDN serves
// (bench/mapview.mjs --viewport 1792x1024, --protocol h2, both), healthy: each library's adapter
// against its own loader per step, and the adapter's concurrency limit at each step's end
// (`maxInFlight` in stats()). Every figure and verdict is computed here.
import { phasesTables } from "./report-mapview-fast.mjs";
import { median } from "./stats.mjs";
import { int, ratio, table } from "./markdown.mjs";
import { commandOf, pairedSteps, stepNames } from "./report-mapview.mjs";
import { platformTable } from "./report-mapview-platform.mjs";

/** The targets of issue "Never slower than the map's own loader on a healthy server". */
export const SETUP_TARGETS = { pairedRatio: 1.03, stepRatio: 1.15 };

const LIB_TITLE = { ol: "OpenLayers", leaflet: "Leaflet", maplibre: "MapLibre" };

/** How `data` was served and shown: "HTTP/2, 1792×1024". */
const setupOf = (data) => `${data.protocol === "h2" ? "HTTP/2 + TLS" : "HTTP/1.1"}, ${(data.viewport ?? "768x512").replace("x", "×")}`;

/**
 * @param sets bench/out/mapview-1792x1024.json, mapview-h2.json and mapview-h2-1792x1024.json
 *   (each or null)
 * @param lose `(section, text)`: records a missed target
 * @param phases bench/out/mapview-phases-public-h2.json (or null): where a tile's time goes over
 *   HTTP/2, the profile behind the open step's figures
 * @param platform `{ fetch, worker }`: bench/out/mapview-h2-1792x1024-platform-fetch.json and
 *   -platform-worker.json (each or null), Leaflet through the platform alone
 */
export function setupsSection(sets, lose, phases = null, platform = {}) {
  const md = ["## Map view over HTTP/2 and at full screen", ""];
  const present = sets.filter(Boolean);
  if (present.length === 0) {
    md.push("Not run (bench/out/mapview-1792x1024.json, mapview-h2.json and mapview-h2-1792x1024.json are missing).", "");
    if (phases) md.push(...phasesTables(phases));
    return md;
  }
  md.push(`Reproduce: ${present.map((d) => `\`${commandOf(d)}\``).join(", ")} (part of \`bash scripts/bench.sh\`). The pages, script`);
  md.push('and checks of "Map view" above, healthy (the server answering in 30–80 ms), in the set-ups most maps meet: a');
  md.push("full-screen view (about 40 tiles a view where the default shows 12) and the tile server over HTTPS with HTTP/2, as a tile CDN");
  md.push("serves (a self-signed certificate Chromium is told to trust; the browser then multiplexes every tile request on one");
  md.push("connection, where over HTTP/1.1 it holds all but six a host). Each adapter run is paired with the own loader's run of");
  md.push("the same round; a ratio is the adapter's time over the own loader's. **limit**: the adapter's concurrency limit per host");
  md.push("at each step's end (`maxInFlight` in `stats()`: a page meets a host at 64, and goes to the default's 16 once the");
  md.push("browser is seen to hold requests for its HTTP/1.1 connections, see `maxConcurrent` in docs/tile-client.md), the median");
  md.push("over rounds.");
  md.push("");
  const rows = [];
  for (const data of present) {
    for (const lib of Object.keys(LIB_TITLE).filter((id) => data.runs.some((r) => r.lib === id && r.scenario === "ok"))) {
      const p = pairedSteps(data, lib);
      const stepMedians = p.steps.map((s) => (s.ratios.length ? median(s.ratios) : null));
      const worst = Math.max(...stepMedians.filter((v) => v !== null));
      const worstAt = stepNames(data)[stepMedians.indexOf(worst)];
      const runsOf = (loader) => data.runs.filter((r) => r.lib === lib && r.loader === loader && r.scenario === "ok");
      const requests = (loader) => median(runsOf(loader).map((r) => r.requests / r.tilesAsked));
      const okAll = p.all !== null && p.all <= SETUP_TARGETS.pairedRatio;
      const okStep = Number.isFinite(worst) && worst <= SETUP_TARGETS.stepRatio;
      rows.push([
        LIB_TITLE[lib],
        setupOf(data),
        `${ratio(p.all)} (${p.n} steps)`,
        okAll ? "met" : "**missed**",
        `${ratio(worst)} (${worstAt})`,
        okStep ? "met" : "**missed**",
        `${requests("own").toFixed(2)} / ${requests("tilefetch").toFixed(2)}`,
      ]);
      if (!okAll)
        lose(
          `map view, ${setupOf(data)}: ${LIB_TITLE[lib]}`,
          `${ratio(p.all)} the own loader's time (median of paired steps; target ≤ ${SETUP_TARGETS.pairedRatio}×)`,
        );
      if (!okStep)
        lose(
          `map view, ${setupOf(data)}: ${LIB_TITLE[lib]}`,
          `${worstAt} step ${ratio(worst)} the own loader's time (median over rounds; target ≤ ${SETUP_TARGETS.stepRatio}×)`,
        );
    }
  }
  md.push(
    `Targets: the median of paired steps ≤ ${SETUP_TARGETS.pairedRatio}×, and no step's median over rounds above ${SETUP_TARGETS.stepRatio}× (the open step included).`,
  );
  md.push("");
  md.push(table(["library", "set-up", "median of paired steps", "", "slowest step (median of its pairs)", "", "requests per tile asked, own / adapter"], rows));
  md.push("");
  for (const data of present) {
    const libs = Object.keys(LIB_TITLE).filter((id) => data.runs.some((r) => r.lib === id && r.scenario === "ok"));
    const per = Object.fromEntries(libs.map((lib) => [lib, pairedSteps(data, lib)]));
    const limitAt = (lib, i) => {
      const limits = data.runs
        .filter((r) => r.lib === lib && r.loader === "tilefetch" && r.scenario === "ok")
        .map((r) => r.steps[i]?.maxInFlight)
        .filter((v) => typeof v === "number");
      return limits.length ? int(median(limits)) : "—";
    };
    const rounds = Math.max(...libs.map((l) => per[l].steps[0].own.length));
    md.push(`Per step, ${setupOf(data)} (median ms over ${rounds} rounds; the open step first):`);
    md.push("");
    md.push(
      table(
        ["step", ...libs.flatMap((lib) => [`${LIB_TITLE[lib]} own`, "adapter", "ratio", "limit"])],
        stepNames(data).map((name, i) => [
          i === 0 ? `**${name}**` : name,
          ...libs.flatMap((lib) => {
            const s = per[lib].steps[i];
            return [int(median(s.own)), int(median(s.tilefetch)), ratio(s.ratios.length ? median(s.ratios) : null), limitAt(lib, i)];
          }),
        ]),
      ),
    );
    md.push("");
  }
  if (phases) md.push(...phasesTables(phases));
  md.push(
    ...platformTable(sets.find((d) => d?.protocol === "h2" && d.viewport === "1792x1024") ?? null, platform, {
      setup: "over HTTP/2 at 1792×1024",
      files: "bench/out/mapview-h2-1792x1024.json with Leaflet, and mapview-h2-1792x1024-platform-fetch.json or -worker.json",
    }),
  );
  return md;
}
