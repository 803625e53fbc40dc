// The "Edge scale" section of bench/RESULTS.md, from bench/out/edge.json (bench/edge-scale.mjs).
// Every figure and every target verdict is computed here from the runs.
import { median } from "./stats.mjs";
import { int, table } from "./markdown.mjs";

/** The targets of issue "edge scale". */
export const EDGE_TARGETS = { loadRatio: 1.5, firstTileMs: 2000, healthyP95AddedMs: 5 };
/** The targets of issue "the edge proxy during an outage". */
export const STALE_TARGETS = { firstStaleMs: 1000, knownDownMs: 100, recoveryMs: 2000 };

const range = (xs) => (xs.length ? `${int(Math.min(...xs))}–${int(Math.max(...xs))}` : "—");

/**
 * @param data bench/out/edge.json, or null
 * @param lose `(section, text)`: records a missed target for "Where tilefetch loses"
 * @returns {string[]}
 */
export function edgeSection(data, lose) {
  const md = ["## Edge scale (workerd, UpstreamGate)", ""];
  if (!data) {
    md.push("Not run (bench/out/edge.json is missing).", "");
    return md;
  }
  const s = data.setup;
  const runs = data.outage.length / new Set(data.outage.map((o) => `${o.isolates}-${o.gate}`)).size;
  md.push(
    `Command: \`${data.command}\` (${data.seconds.toFixed(0)} s). K worker scripts in one workerd (Miniflare), each an isolate with its own TileClient, ` +
      `bound to one UpstreamGate class; requests one every ${s.intervalMs} ms for ${s.totalMs / 1000} s, round-robin over the isolates, each for a new tile; ` +
      `the upstream (loopback fault server) answers 503 for the first ${s.outageMs / 1000} s. Proxy config: deadlineMs ${s.config.deadlineMs}, ` +
      `gate openMs ${s.config.gate.openMs}, maxOpenMs ${s.config.gate.maxOpenMs} (threshold 5). ${runs} runs per row; medians, ranges in brackets.`,
    "",
  );
  const configs = [];
  for (const o of data.outage) if (!configs.some((c) => c.isolates === o.isolates && c.gate === o.gate)) configs.push({ isolates: o.isolates, gate: o.gate });
  const of = (c) => data.outage.filter((o) => o.isolates === c.isolates && o.gate === c.gate);
  const one = configs.find((c) => c.isolates === 1 && c.gate === "on");
  const oneLoad = one ? median(of(one).map((o) => o.upstreamDuringOutage)) : null;
  const rows = configs.map((c) => {
    const rs = of(c);
    const during = rs.map((o) => o.upstreamDuringOutage);
    const first = rs.map((o) => o.firstTileAfterMs ?? Infinity);
    const ratio = oneLoad ? median(during) / oneLoad : null;
    return [
      `${c.isolates}, ${c.gate === "on" ? "gated" : "no gate"}`,
      `${int(median(during))} (${range(during)})`,
      ratio == null ? "—" : `${ratio.toFixed(2)}×`,
      `${int(Math.max(...first))} ms`,
      `${median(rs.map((o) => o.gateCalls / o.requests)).toFixed(2)}`,
      `${int(median(rs.map((o) => o.served)))} / ${int(median(rs.map((o) => o.requests)))}`,
    ];
  });
  md.push(
    table(
      ["isolates", "upstream requests during the outage", "vs 1 gated isolate", "slowest first tile after it", "gate RPCs per request", "tiles / requests"],
      rows,
    ),
    "",
  );
  const healthy = (g) => data.healthy.filter((h) => h.gate === g);
  const hp95 = (g) => median(healthy(g).map((h) => h.p95));
  md.push(
    `Healthy upstream, one isolate, ${s.healthyN} tiles ${s.healthyConcurrency} at a time:`,
    "",
    table(
      ["gate", "p50", "p95", "failed", "gate RPCs per tile"],
      ["off", "on", "down"].map((g) => [
        g === "off" ? "none" : g === "on" ? "bound" : "bound, down (every RPC throws)",
        `${median(healthy(g).map((h) => h.p50)).toFixed(1)} ms`,
        `${hp95(g).toFixed(1)} ms`,
        `${healthy(g).reduce((n, h) => n + h.failed, 0)} of ${healthy(g).reduce((n, h) => n + h.requests, 0)}`,
        median(healthy(g).map((h) => h.gatePerTile)).toFixed(2),
      ]),
    ),
    "",
  );
  // Targets.
  const verdicts = [];
  for (const k of [4, 8]) {
    const c = configs.find((x) => x.isolates === k && x.gate === "on");
    if (!c || oneLoad == null) continue;
    const ratio = median(of(c).map((o) => o.upstreamDuringOutage)) / oneLoad;
    const met = ratio <= EDGE_TARGETS.loadRatio;
    verdicts.push(`- ${k} gated isolates: ${ratio.toFixed(2)}× one isolate's outage load (target ≤ ${EDGE_TARGETS.loadRatio}×): ${met ? "met" : "missed"}`);
    if (!met) lose("edge", `${k} gated isolates send ${ratio.toFixed(2)}× one isolate's requests during an outage`);
  }
  const slowest = Math.max(...data.outage.map((o) => o.firstTileAfterMs ?? Infinity));
  const firstMet = slowest <= EDGE_TARGETS.firstTileMs;
  verdicts.push(
    `- first tile after the outage, every configuration and run: at most ${int(slowest)} ms (target ≤ ${EDGE_TARGETS.firstTileMs} ms): ${firstMet ? "met" : "missed"}`,
  );
  if (!firstMet) lose("edge", `the first tile after an outage came ${int(slowest)} ms after it`);
  const added = hp95("on") - hp95("off");
  const addedMet = added <= EDGE_TARGETS.healthyP95AddedMs;
  verdicts.push(`- healthy: the gate adds ${added.toFixed(1)} ms at p95 (target ≤ ${EDGE_TARGETS.healthyP95AddedMs} ms): ${addedMet ? "met" : "missed"}`);
  if (!addedMet) lose("edge", `the gate adds ${added.toFixed(1)} ms per tile at p95 on a healthy upstream`);
  const downFailed = healthy("down").reduce((n, h) => n + h.failed, 0);
  verdicts.push(`- gate down: ${downFailed} failed tiles (target 0): ${downFailed === 0 ? "met" : "missed"}`);
  if (downFailed) lose("edge", `${downFailed} tiles failed while the gate was down`);
  if (data.stale?.length) {
    const st = data.stale;
    const ms = (xs) => `${int(median(xs))} ms (${range(xs)})`;
    const ups = (xs) => `${int(median(xs))} (${range(xs)})`;
    md.push(
      `During an outage with the proxy's defaults (one isolate, no gate, cacheTtlS 1 so that its tiles go stale; ${st.length} runs): the upstream answers 503 for ${(data.staleOutageMs ?? s.outageMs) / 1000} s after its tiles were cached.`,
      "",
      table(
        ["request", "time to answer", "upstream requests for it"],
        [
          ["a stale tile, its first call (served at its first failed attempt)", ms(st.map((r) => r.firstStale.ms)), ups(st.map((r) => r.firstStale.upstream))],
          [
            "new tiles until the upstream is known down (how many)",
            ups(st.map((r) => r.uncached.length)),
            ups(st.map((r) => r.uncached.reduce((n, u) => n + u.upstream, 0))),
          ],
          ["a stale tile once known down", ms(st.map((r) => r.knownDownStale.ms)), ups(st.map((r) => r.knownDownStale.upstream))],
          ["a new tile once known down (503 + Retry-After)", ms(st.map((r) => r.knownDownNew.ms)), ups(st.map((r) => r.knownDownNew.upstream))],
          ["the first fresh tile after the outage", ms(st.map((r) => r.firstFreshMs ?? Infinity)), "—"],
        ],
      ),
      "",
    );
    const worst = (f) => Math.max(...st.map(f));
    const checks = [
      [
        `a stale tile, first call, at most ${int(worst((r) => r.firstStale.ms))} ms`,
        worst((r) => r.firstStale.ms) <= STALE_TARGETS.firstStaleMs,
        `≤ ${STALE_TARGETS.firstStaleMs} ms`,
      ],
      [
        `once known down: a stale tile at most ${int(worst((r) => r.knownDownStale.ms))} ms, a new tile's 503 at most ${int(worst((r) => r.knownDownNew.ms))} ms with ${worst((r) => r.knownDownNew.upstream)} upstream requests`,
        worst((r) => Math.max(r.knownDownStale.ms, r.knownDownNew.ms)) <= STALE_TARGETS.knownDownMs &&
          worst((r) => r.knownDownNew.upstream) === 0 &&
          st.every((r) => r.knownDownNew.status === 503),
        `≤ ${STALE_TARGETS.knownDownMs} ms, 0 requests`,
      ],
      [
        `the first fresh tile at most ${int(worst((r) => r.firstFreshMs ?? Infinity))} ms after the outage`,
        worst((r) => r.firstFreshMs ?? Infinity) <= STALE_TARGETS.recoveryMs,
        `≤ ${STALE_TARGETS.recoveryMs} ms`,
      ],
    ];
    for (const [text, met, target] of checks) {
      verdicts.push(`- outage with stale copies: ${text} (target ${target}): ${met ? "met" : "missed"}`);
      if (!met) lose("edge", `outage with stale copies: ${text}`);
    }
  }
  md.push("Targets:", "", ...verdicts, "");
  return md;
}
