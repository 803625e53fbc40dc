// RESULTS.md's "Leaflet through the platform alone" tables: Leaflet's adapter beside a layer that
// loads through the platform with no tilefetch (bench/mapview.mjs --platform-loader), each paired
// with Leaflet's own loader, in a set-up of the map-view bench.
import { median } from "./stats.mjs";
import { ratio, table } from "./markdown.mjs";
import { commandOf, pairedSteps, stepNames } from "./report-mapview.mjs";

/**
 * The adapter's Leaflet runs (`adapter`) beside the platform's arms (`fetch`: on the page's
 * thread, `worker`: in a dedicated worker), each against Leaflet's own loader; `setup` says where
 * (as "over HTTP/2 at 1792×1024"), `files` which outputs make it. Not run unless the adapter's runs
 * and at least one platform arm are there.
 */
export function platformTable(adapter, { fetch = null, worker = null }, { setup, files }) {
  const md = [`### Leaflet through the platform alone, ${setup}`, ""];
  const hasLeaflet = (data) => data?.runs.some((r) => r.lib === "leaflet" && r.scenario === "ok") === true;
  const arms = [
    ["the adapter (tilefetch)", adapter],
    ["the platform alone, on the page's thread", fetch],
    ["the platform alone, in a dedicated worker", worker],
  ].filter(([, data]) => hasLeaflet(data));
  if (!hasLeaflet(adapter) || arms.length < 2) {
    md.push(`Not run (${files} are needed).`, "");
    return md;
  }
  const names = stepNames(adapter);
  if (arms.some(([, data]) => JSON.stringify(data.script) !== JSON.stringify(adapter.script))) throw new Error("platformTable: the arms ran different scripts");
  md.push(`Reproduce: ${arms.map(([, data]) => `\`${commandOf(data)}\``).join(", ")}`);
  md.push(`(part of \`bash scripts/bench.sh\`). Leaflet ${setup} as above, each arm paired with Leaflet's own`);
  md.push("loader round by round; beside the adapter, a layer with no tilefetch (tests/browser/fixtures/adapters/platform-layer.js)");
  md.push("that shows the adapter's canvas tile: fetch, the body's reader and `ImageDecoder` on the page's thread; or fetch,");
  md.push("`arrayBuffer()` and `ImageDecoder` in a dedicated worker, the bitmap transferred back. It loads every tile through");
  md.push("fetch, the first view's too (the adapter loads those as images while it learns the server's CORS answer), and has");
  md.push("no retry. Each arm is one run: what the platform's fetch path costs against Leaflet's own loader without tilefetch,");
  md.push("not a share of the adapter's figure (a run of one build moves from the next: ARCHITECTURE.md's ledger has series).");
  md.push("");
  md.push(
    table(
      ["loader", "median of paired steps", ...names],
      arms.map(([title, data]) => {
        const p = pairedSteps(data, "leaflet");
        return [title, `${ratio(p.all)} (${p.n} steps)`, ...p.steps.map((st) => ratio(st.ratios.length ? median(st.ratios) : null))];
      }),
    ),
  );
  md.push("");
  return md;
}
