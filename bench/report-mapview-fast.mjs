// The section of bench/RESULTS.md on the map view over a fast server: bench/mapview.mjs with
// `--server fast` (the fault server answering in 0–5 ms) and `--server mapproxy` (a real MapProxy
// 7), the same runs at an earlier commit (bench/out/mapview-fast-before.json) and where each
// tile's time goes (bench/mapview-phases.mjs). Every figure and verdict is computed here.
import { BOOTSTRAP_DRAWS, bootstrapMedianInterval, median } from "./stats.mjs";
import { int, ratio, table } from "./markdown.mjs";
import { pairedSteps, stepNames } from "./report-mapview.mjs";
import { platformTable } from "./report-mapview-platform.mjs";

/** The targets of issue "As fast as the map's own loader on a fast server, from the first view". */
export const FAST_TARGETS = { pairedRatio: 1.03, openRatio: 1.1 };

const LIB_TITLE = { ol: "OpenLayers", leaflet: "Leaflet", maplibre: "MapLibre" };

/** The bootstrap interval over rounds of `paired` (pairedSteps), of the ratios `pick` takes from a round: "a–b", or null. */
const spreadOf = (paired, pick) => {
  const range = bootstrapMedianInterval(paired.rounds.map(pick));
  return range ? range.map((v) => v.toFixed(2)).join("–") : null;
};
const allSteps = (round) => round.all;
const openStep = (round) => round.open;

/**
 * @param runs what the benches left, each or null: `fast` (bench/out/mapview-fast.json),
 *   `returning` (mapview-fast-returning.json), `mapproxy` (mapview-mapproxy.json), `before`
 *   (bench/history/mapview-fast-before.json, with `commit`), `phases` (mapview-phases.json),
 *   `phasesBefore` (the same at an earlier commit, with `commit`), `requestStart`
 *   (request-start.json), `platform` (`{ fetch, worker }`: mapview-mapproxy-platform-fetch.json and
 *   -worker.json, Leaflet through the platform alone on MapProxy)
 * @param lose `(section, text)`: records a missed target
 */
export function fastServerSection({ fast, returning, mapproxy, before, phases, phasesBefore, requestStart, platform = {} }, lose) {
  const md = ["## Map view on a fast server", ""];
  if (!fast && !mapproxy) {
    md.push("Not run (bench/out/mapview-fast.json and mapview-mapproxy.json are missing).", "");
    return md;
  }
  md.push("Reproduce: `node bench/mapview.mjs --server fast`, `--server fast-returning`, `--server mapproxy`,");
  md.push("`node bench/mapview-phases.mjs` and `node bench/request-start.mjs` (all part of `bash scripts/bench.sh`). The pages, script and checks of");
  md.push('"Map view" above, over servers where the network hides nothing: the fault server answering in 0–5 ms');
  md.push(`(\`${fast?.latency ?? "delay=0&delayjitter=5"}\`), healthy and under the same faults, and a real MapProxy 7.0.0 as the`);
  md.push("test suite installs it (its `debug` source, rendered and cached by MapProxy, CORS headers on), healthy; its tiles are");
  md.push("not the fault server's, so there a tile counts as shown when its library says it loaded. Each healthy run is");
  md.push("paired with the own loader's run of the same round; a ratio is the adapter's time over the own loader's.");
  md.push("A tile counts as loaded once the library has it and its image is decoded, ready to paint: OpenLayers' own loader");
  md.push("waits for `img.decode()` itself; Leaflet's fires `tileload` before, so its page waits for the tile's `decode()`.");
  if (before) {
    md.push(`**Before**: the same \`--server fast\` run at commit ${before.commit} (kept as bench/history/mapview-fast-before.json),`);
    md.push("when Leaflet's own tiles counted from `tileload`, before their decode: Leaflet's before figures flatter its own loader.");
  }
  md.push("");

  const sets = [
    ["fast server", fast],
    ["MapProxy", mapproxy],
    ["fast server, before", before],
  ].filter(([, d]) => d);
  const targetRows = [];
  for (const [label, data] of sets.filter(([l]) => !l.includes("before"))) {
    for (const lib of Object.keys(LIB_TITLE).filter((id) => data.runs.some((r) => r.lib === id))) {
      const p = pairedSteps(data, lib);
      const b = before && label === "fast server" ? pairedSteps(before, lib) : null;
      const okAll = p.all !== null && p.all <= FAST_TARGETS.pairedRatio;
      const okOpen = p.open !== null && p.open <= FAST_TARGETS.openRatio;
      const spreadAll = spreadOf(p, allSteps);
      const spreadOpen = spreadOf(p, openStep);
      targetRows.push([
        LIB_TITLE[lib],
        label,
        `${ratio(p.all)} (${p.n} steps${spreadAll ? `, ${spreadAll}` : ""})${b ? `; before ${ratio(b.all)}` : ""}`,
        okAll ? "met" : "**missed**",
        `${ratio(p.open)}${p.rounds.length ? ` (${p.rounds.length} rounds${spreadOpen ? `, ${spreadOpen}` : ""})` : ""}${b ? `; before ${ratio(b.open)}` : ""}`,
        okOpen ? "met" : "**missed**",
      ]);
      if (!okAll)
        lose(
          `map view, ${label}: ${LIB_TITLE[lib]}`,
          `healthy view ${ratio(p.all)} the own loader's time (median of paired steps; target ≤ ${FAST_TARGETS.pairedRatio}×)`,
        );
      if (!okOpen) lose(`map view, ${label}: ${LIB_TITLE[lib]}`, `open step ${ratio(p.open)} the own loader's time (target ≤ ${FAST_TARGETS.openRatio}×)`);
    }
  }
  md.push(`Targets: the median of paired steps ≤ ${FAST_TARGETS.pairedRatio}×, the open step ≤ ${FAST_TARGETS.openRatio.toFixed(2)}×. Beside each median, the`);
  md.push(`range its middle 95 % takes when the rounds are drawn again with replacement (bootstrap over rounds, ${int(BOOTSTRAP_DRAWS)} draws):`);
  md.push("how far the same code's figure moves from run to run on this machine.");
  md.push("");
  md.push(table(["library", "server", "median of paired steps", "", "open step (median of its pairs)", ""], targetRows));
  md.push("");

  for (const [label, data] of sets) {
    const libs = Object.keys(LIB_TITLE).filter((id) => data.runs.some((r) => r.lib === id && r.scenario === "ok"));
    const per = Object.fromEntries(libs.map((lib) => [lib, pairedSteps(data, lib)]));
    const rows = stepNames(data).map((name, i) => [
      i === 0 ? `**${name}**` : name,
      ...libs.flatMap((lib) => {
        const s = per[lib].steps[i];
        return [int(median(s.own)), int(median(s.tilefetch)), ratio(s.ratios.length ? median(s.ratios) : null)];
      }),
    ]);
    md.push(`Per step, ${label}, healthy (median ms over ${Math.max(...libs.map((l) => per[l].steps[0].own.length))} rounds; the open step first):`);
    md.push("");
    md.push(table(["step", ...libs.flatMap((lib) => [`${LIB_TITLE[lib]} own`, "adapter", "ratio"])], rows));
    md.push("");
  }

  if (returning) {
    const libs = Object.keys(LIB_TITLE).filter((id) => returning.runs.some((r) => r.lib === id));
    md.push("A returning visit (`node bench/mapview.mjs --server fast-returning`): the same healthy runs in a page that was");
    md.push("visited before (the map opened elsewhere on the same server, then the page loaded again in the same browser");
    md.push("context): what the adapters learned of the server's CORS headers is in the page's localStorage, so the open step");
    md.push("makes no first contact (docs/map-libraries.md). Beside it, the first visit's figures from the fast-server run above:");
    md.push("");
    md.push(
      table(
        ["library", "median of paired steps, returning", "open step, returning", "open step, first visit"],
        libs.map((lib) => {
          const p = pairedSteps(returning, lib);
          const first = fast ? pairedSteps(fast, lib) : null;
          const within = (paired) => {
            const spread = spreadOf(paired, openStep);
            return spread ? ` (${spread})` : "";
          };
          return [LIB_TITLE[lib], `${ratio(p.all)} (${p.n} steps)`, `${ratio(p.open)}${within(p)}`, first ? `${ratio(first.open)}${within(first)}` : "—"];
        }),
      ),
    );
    md.push("");
  }

  if (requestStart) {
    const r = requestStart.runs;
    const us = (v) => `${Math.round(v)} µs`;
    md.push("Starting a request (`node bench/request-start.mjs`): the page's main thread from the first start of");
    md.push(`${requestStart.perBatch} requests at once until they are started, per request, median of ${requestStart.batches} batches of each:`);
    md.push("`fetch()` as the adapters start a tile, an `<img>`'s src as the own loaders do, under Playwright as the map view");
    md.push("runs (DevTools attached) and in Chromium launched on its own:");
    md.push("");
    md.push(
      table(
        ["Chromium", "fetch()", "<img>", "fetch − <img>"],
        [
          ["under Playwright (DevTools)", "devtools"],
          ["on its own", "plain"],
        ]
          .filter(([, k]) => r[k])
          .map(([label, k]) => [label, us(r[k].fetch.usPerRequest), us(r[k].img.usPerRequest), us(r[k].fetch.usPerRequest - r[k].img.usPerRequest)]),
      ),
    );
    md.push("");
  }

  if (fast) {
    const scenarios = fast.scenarios.filter((s) => s.id !== "ok" && fast.runs.some((r) => r.scenario === s.id));
    if (scenarios.length) {
      const libs = Object.keys(LIB_TITLE).filter((id) => fast.runs.some((r) => r.lib === id));
      const cell = (lib, sc, loader, runsOf = fast.runs) => {
        const run = runsOf.find((r) => r.lib === lib && r.scenario === sc && r.loader === loader);
        if (!run) return "—";
        const holes = run.steps.reduce((n, s) => n + s.holes + s.wrong, 0);
        const done = run.steps.filter((s) => s.completeMs !== null).length;
        return `${holes} (${done}/${run.steps.length})`;
      };
      md.push("Under faults on the fast server: holes and wrong tiles left (steps complete), own loader / adapter:");
      md.push("");
      md.push(
        table(
          ["scenario", ...libs.map((l) => LIB_TITLE[l]), ...(before ? libs.map((l) => `${LIB_TITLE[l]}, adapter before`) : [])],
          scenarios.map((sc) => [
            sc.id,
            ...libs.map((lib) => `${cell(lib, sc.id, "own")} / ${cell(lib, sc.id, "tilefetch")}`),
            ...(before ? libs.map((lib) => cell(lib, sc.id, "tilefetch", before.runs)) : []),
          ]),
        ),
      );
      md.push("");
    }
  }

  if (mapproxy) {
    md.push(
      ...platformTable(mapproxy, platform, {
        setup: "on MapProxy",
        files: "bench/out/mapview-mapproxy.json with Leaflet, and mapview-mapproxy-platform-fetch.json or -worker.json",
      }),
    );
  }

  if (phases) md.push(...phasesTables(phases, phasesBefore));
  return md;
}

/**
 * Where a tile's time goes, per library, loader and step (bench/out/mapview-phases*.json, written
 * by bench/mapview-phases.mjs): the phases table, and the adapter's **after** split where watched.
 * `phasesBefore`: the same run at an earlier commit (its **after** as a last column), or null.
 */
export function phasesTables(phases, phasesBefore = null) {
  const md = [];
  const server = phases.server ?? "fast";
  const protocol = phases.protocol ?? "h1";
  const where = `${server === "fast" ? "fast server" : "the 30–80 ms server"}${protocol === "h2" ? " over HTTP/2 + TLS" : ""}`;
  const asDefault = server === "fast" && protocol === "h1";
  const command = `node bench/mapview-phases.mjs${asDefault ? "" : ` --server ${server} --protocol ${protocol}`}`;
  md.push(`Where a tile's time goes (\`${command}\`, ${where}, healthy; ms, p50 / p90 per tile):`);
  md.push("**issue** from the library asking for the tile to its request starting, **net** the request, **after** from the");
  md.push("response's end to the tile loaded and decoded (the adapter's body read, classification, hand-off and decode; the");
  md.push("own loader's decode of its `<img>`):");
  md.push("");
  const rows = [];
  const cell = (s, p) => (s ? `${s[p].p50?.toFixed(1) ?? "—"} / ${s[p].p90?.toFixed(1) ?? "—"}` : "—");
  for (const [lib, loaders] of Object.entries(phases.libs)) {
    for (const [loader, steps] of Object.entries(loaders)) {
      for (const [step, s] of Object.entries(steps)) {
        const b = phasesBefore?.libs?.[lib]?.[loader]?.[step] ?? null;
        rows.push([
          LIB_TITLE[lib],
          loader === "own" ? "own loader" : "adapter",
          step,
          s.tiles,
          ...["issue", "net", "after"].map((p) => cell(s, p)),
          ...(phasesBefore ? [cell(b, "after")] : []),
        ]);
      }
    }
  }
  if (phasesBefore) {
    md.push(
      `The last column: **after** at commit ${phasesBefore.commit} (bench/history/mapview-phases-before.json), when Leaflet's own tiles counted before their decode.`,
      "",
    );
  }
  md.push(table(["library", "loader", "steps", "tiles", "issue", "net", "after", ...(phasesBefore ? ["after, before"] : [])], rows));
  md.push("");
  const splitRows = [];
  for (const [lib, loaders] of Object.entries(phases.libs)) {
    for (const [step, s] of Object.entries(loaders.tilefetch ?? {})) {
      if (!s.split) continue;
      splitRows.push([LIB_TITLE[lib], step, ...Object.values(s.split).map((v) => `${v.p50?.toFixed(1) ?? "—"} / ${v.p90?.toFixed(1) ?? "—"}`)]);
    }
  }
  if (splitRows.length) {
    md.push("The adapter's **after**, split (ms, p50 / p90 per tile): from the response's end (Resource Timing, the network");
    md.push("stack) to `fetch()` resolving in the page, to its body read (the reader's last read), to");
    md.push("the decoder starting (the core's classification and the hand-off), the decode, and the library's \"loaded\":");
    md.push("");
    md.push(table(["library", "steps", "end → fetch resolved", "→ body read", "→ decoder started", "decode", "→ loaded"], splitRows));
    md.push("");
  }
  const issueRows = [];
  for (const [lib, loaders] of Object.entries(phases.libs)) {
    for (const [loader, steps] of Object.entries(loaders)) {
      for (const [step, s] of Object.entries(steps)) {
        if (!s.issueSplit) continue;
        const cells = Object.values(s.issueSplit).map((v) => `${v.p50?.toFixed(1) ?? "—"} / ${v.p90?.toFixed(1) ?? "—"}`);
        issueRows.push([LIB_TITLE[lib], loader === "own" ? "own loader" : "adapter", step, ...cells]);
      }
    }
  }
  if (issueRows.length) {
    md.push("**issue**, split (ms, p50 / p90 per tile): from the library asking for the tile to the page making its request");
    md.push("(`fetch()` called, or an image's `src` set: for the adapter, its own part, the core and its queue), and from there");
    md.push("to the request's start (Resource Timing: the browser's part):");
    md.push("");
    md.push(table(["library", "loader", "steps", "asked → request made", "→ request started"], issueRows));
    md.push("");
  }
  return md;
}
