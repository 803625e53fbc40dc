#!/usr/bin/env node
// node tests/real-servers/probe.mjs [--json]
//
// Starts MapProxy and MapServer (each behind a front proxy, so the /as200/ variants work too),
// fetches every case of cases.mjs once with plain fetch, and prints what really came back:
// status, content-type, the first OGC exception code ("-" for none), the start of its text and
// the body length. The last column compares that with the case's `sends`; any difference makes
// the exit code 1, so a server that changed its answers is noticed before the suite misjudges it.
// Both servers are stopped at the end, on error, and on Ctrl-C.

import { startMapProxy } from "./mapproxy/server.mjs";
import { startMapServer } from "./mapserver/cgi.mjs";
import { startFrontProxy } from "./front-proxy.mjs";
import { MAPPROXY_CASES, MAPSERVER_CASES, caseUrl } from "./cases.mjs";

const json = process.argv.includes("--json");
const stops = [];
async function stopAll() {
  while (stops.length)
    await stops
      .pop()()
      .catch((e) => console.error("stop:", e.message));
}
let interrupted = false;
process.once("SIGINT", () => {
  interrupted = true; // the fetch in flight fails when its server goes: not worth a stack trace
  stopAll().then(() => process.exit(130));
});

const decode = (s) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|quot|apos|lt|gt|amp);/gi, (_m, e) =>
    e[0] === "#"
      ? String.fromCodePoint(e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : +e.slice(1))
      : { quot: '"', apos: "'", lt: "<", gt: ">", amp: "&" }[e.toLowerCase()],
  );

/** The first exception of a WMS ServiceExceptionReport or OWS ExceptionReport, or null. */
export function firstException(text) {
  if (!/<(\w+:)?(ServiceExceptionReport|ExceptionReport)\b/.test(text)) return null;
  const m = /<(?:\w+:)?(ServiceException|Exception)\b([^>]*)>([\s\S]*?)<\/(?:\w+:)?\1>/.exec(text);
  if (!m) return { code: null, text: "" };
  const code = /\b(?:code|exceptionCode)\s*=\s*"([^"]*)"/.exec(m[2])?.[1] ?? null;
  const inner = m[3].replace(/<[^>]*>/g, " ");
  return { code, text: decode(inner).replace(/\s+/g, " ").trim().slice(0, 200) };
}

async function timed(fn) {
  const t = performance.now();
  const v = await fn();
  return [v, performance.now() - t];
}

try {
  const [mapproxy, mpStartMs] = await timed(() => startMapProxy());
  stops.push(() => mapproxy.stop());
  const [mapserver, msStartMs] = await timed(() => startMapServer());
  stops.push(() => mapserver.stop());
  const fronts = { mapproxy: await startFrontProxy(mapproxy.url), mapserver: await startFrontProxy(mapserver.url) };
  stops.push(
    () => fronts.mapproxy.stop(),
    () => fronts.mapserver.stop(),
  );

  const rows = [];
  const times = { mapproxy: [], mapserver: [] };
  for (const c of [...MAPPROXY_CASES, ...MAPSERVER_CASES]) {
    const [res, ms] = await timed(async () => {
      const r = await fetch(caseUrl(fronts[c.server].url, c));
      return { r, body: Buffer.from(await r.arrayBuffer()) };
    });
    times[c.server].push(ms);
    const type = res.r.headers.get("content-type") ?? "";
    const exc = /xml/.test(type) || res.body.subarray(0, 200).includes("<") ? firstException(res.body.toString("utf8")) : null;
    const got = { status: res.r.status, type, report: exc !== null, code: exc?.code ?? null, text: exc?.text };
    const diff = ["status", "type", "report", "code", "text"].filter(
      (k) => k in c.sends && c.sends[k] !== got[k] && !(k === "text" && c.sends.text === undefined),
    );
    rows.push({
      case: c.name,
      status: got.status,
      type,
      code: got.code ?? "-",
      text: (got.text ?? "").slice(0, 60),
      length: res.body.length,
      ms: Math.round(ms),
      check: diff.length ? `DIFF ${diff.map((k) => `${k}=${JSON.stringify(got[k])}`).join(" ")}` : "ok",
    });
  }

  if (json) console.log(JSON.stringify(rows, null, 2));
  else {
    const cols = ["case", "status", "type", "code", "text", "length", "check"];
    const width = Object.fromEntries(cols.map((k) => [k, Math.max(k.length, ...rows.map((r) => String(r[k]).length))]));
    const line = (r) =>
      cols
        .map((k) => String(r[k]).padEnd(width[k]))
        .join("  ")
        .trimEnd();
    console.log(line(Object.fromEntries(cols.map((k) => [k, k]))));
    for (const r of rows) console.log(line(r));
  }
  const avg = (a) => (a.reduce((s, x) => s + x, 0) / a.length).toFixed(0);
  const max = (a) => Math.max(...a).toFixed(0);
  console.log(`\nstart: mapproxy ${mpStartMs.toFixed(0)} ms, mapserver cgi host ${msStartMs.toFixed(0)} ms`);
  console.log(
    `per request: mapproxy avg ${avg(times.mapproxy)} ms (max ${max(times.mapproxy)}), mapserver avg ${avg(times.mapserver)} ms (max ${max(times.mapserver)})`,
  );
  const bad = rows.filter((r) => r.check !== "ok").length;
  console.log(`${rows.length} cases, ${bad} differ from cases.mjs`);
  process.exitCode = bad ? 1 : 0;
} catch (e) {
  if (!interrupted) console.error(e);
  process.exitCode = 2;
} finally {
  await stopAll();
}
