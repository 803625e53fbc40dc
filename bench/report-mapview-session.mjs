// The "Map sessions: a fast pan and a long session" section of bench/RESULTS.md, from
// bench/out/mapview-session.json (bench/mapview-session.mjs). Every figure and verdict is computed here.
import { int, table } from "./markdown.mjs";
import { median } from "./stats.mjs";

/**
 * The targets of issue "Never slower than the map's own loader": a fast pan's last view complete
 * no later than with the own loader, with no more requests; a long session's requests per tile
 * shown within 5 % of the own loader's.
 */
export const SESSION_TARGETS = { sessionRequestsRatio: 1.05 };

const TITLES = { ol: "OpenLayers", leaflet: "Leaflet", maplibre: "MapLibre" };

/**
 * @param data bench/out/mapview-session.json, or null
 * @param lose `(section, text)`: records a missed target for "Where tilefetch loses"
 * @returns {string[]}
 */
export function sessionSection(data, lose) {
  const md = ["## Map sessions: a fast pan and a long session", ""];
  if (!data) {
    md.push("Not run (bench/out/mapview-session.json is missing).", "");
    return md;
  }
  // The servers' answer times, read off the fault server's query the bench used.
  const latency = (query) => {
    const q = new URLSearchParams(query);
    const delay = Number(q.get("delay") ?? 0);
    const jitter = Number(q.get("delayjitter") ?? 0);
    return jitter > 0 ? `${delay}–${delay + jitter} ms` : `${delay} ms`;
  };
  md.push(
    'Reproduce: `node bench/mapview-session.mjs` (part of `bash scripts/bench.sh`). The pages of "Map view" above, healthy, ' +
      "each library with its own loader and with the tilefetch adapter (defaults). **Fast pan**: the map opens and loads, then " +
      `a new view every ${data.panEveryMs} ms, ${data.pans} times one way, on a server answering every tile after ${latency(data.fastPanLatency)} ` +
      `(\`${data.fastPanLatency}\`), HTTP/1.1; from the first pan until the last view is complete, and the requests the server ` +
      `saw in that time (tiles of views already gone that still went out); ${data.rounds} round${data.rounds === 1 ? "" : "s"} each, medians. **Long session**: ` +
      `${data.moves} moves back and forth among five places (\`sessionMoves\` in the bench), each waiting for its view, on a server answering in ` +
      `${latency(data.sessionLatency)} and sending tiles without a \`Cache-Control\` header (\`cc=none\`, as most tile servers send), twice per loader; ` +
      "the server's requests per view tile shown, over both. The own `<img>` loader shows a tile it has shown before from the page's image memory; " +
      "the adapters from the client's recent tiles (`memoryCacheBytes`); OpenLayers and MapLibre keep tiles of their own too. The OpenLayers " +
      'adapter lets a request of a view gone land (`whenAbandoned: "land"`), as OpenLayers\' own loader lets an image finish; the Leaflet and ' +
      'MapLibre adapters let it land only while no other request to the host waits for a slot or a connection, else abort it (`whenAbandoned: "yield"`).',
    "",
  );
  const where = "Map sessions";
  const rows = [];
  for (const lib of [...new Set(data.fast.map((r) => r.lib))]) {
    const of = (loader) => data.fast.filter((r) => r.lib === lib && r.loader === loader);
    const ms = (loader) => median(of(loader).map((r) => r.completeMs ?? Number.POSITIVE_INFINITY));
    const requests = (loader) => median(of(loader).map((r) => r.requests));
    const [ownMs, ourMs, ownReq, ourReq] = [ms("own"), ms("tilefetch"), requests("own"), requests("tilefetch")];
    const timeMet = ourMs <= ownMs;
    const requestsMet = ourReq <= ownReq;
    rows.push([TITLES[lib] ?? lib, int(ownMs), int(ourMs), timeMet ? "met" : "**missed**", String(ownReq), String(ourReq), requestsMet ? "met" : "**missed**"]);
    if (!timeMet) lose(where, `${TITLES[lib]} fast pan: last view complete after ${int(ourMs)} ms against the own loader's ${int(ownMs)} ms`);
    if (!requestsMet) lose(where, `${TITLES[lib]} fast pan: ${ourReq} requests against the own loader's ${ownReq}`);
  }
  md.push(
    "Fast pan (median of rounds):",
    "",
    table(["library", "own loader, ms", "adapter, ms", "no later", "own loader, requests", "adapter, requests", "no more requests"], rows),
    "",
  );
  const sessionRows = [];
  for (const lib of [...new Set(data.sessions.map((r) => r.lib))]) {
    // The sessions of each loader summed (two each, in alternating order).
    const total = (loader) => {
      const runs = data.sessions.filter((r) => r.lib === lib && r.loader === loader);
      const sum = (f) => runs.reduce((n, r) => n + r[f], 0);
      return runs.length ? { shown: sum("shown"), requests: sum("requests"), incomplete: sum("incomplete") } : null;
    };
    const [own, ours] = [total("own"), total("tilefetch")];
    if (!own || !ours) continue;
    const perTile = (r) => r.requests / r.shown;
    const ratio = perTile(ours) / perTile(own);
    const met = ratio <= SESSION_TARGETS.sessionRequestsRatio;
    sessionRows.push([
      TITLES[lib] ?? lib,
      int(own.shown),
      `${own.requests} (${perTile(own).toFixed(3)})`,
      `${ours.requests} (${perTile(ours).toFixed(3)})`,
      `${ratio.toFixed(2)}×`,
      met ? "met" : "**missed**",
      `${own.incomplete} / ${ours.incomplete}`,
    ]);
    if (!met)
      lose(where, `${TITLES[lib]} long session: ${perTile(ours).toFixed(3)} requests per tile shown against the own loader's ${perTile(own).toFixed(3)}`);
  }
  md.push(
    `Long session (target: requests per tile shown ≤ ${SESSION_TARGETS.sessionRequestsRatio}× the own loader's):`,
    "",
    table(
      ["library", "view tiles shown", "own loader: requests (per tile)", "adapter: requests (per tile)", "ratio", "", "moves incomplete, own / adapter"],
      sessionRows,
    ),
    "",
  );
  return md;
}
