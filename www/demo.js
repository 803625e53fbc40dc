// The demo page: two maps of one view (tilefetch vs the library's plain loader), the fault
// controls of the loopback tile server, and live stats of the shared TileClient.
// TileError is used below on purpose: pkg/package.json says "sideEffects": false, so a bundle that
// takes only re-exports (TileClient, fetchTile) from browser.js drops its `await init(...)`.
import { TileClient, TileError } from "tilefetch";

const LIBS = {
  ol: () => import("./maps/ol.js"),
  leaflet: () => import("./maps/leaflet.js"),
  maplibre: () => import("./maps/maplibre.js"),
};
const params = new URLSearchParams(location.search);
const lib = LIBS[params.get("lib")] ? params.get("lib") : "ol";
const $ = (id) => document.getElementById(id);

// ---------------------------------------------------------------- tile records per map

const records = { tilefetch: new Map(), plain: new Map() }; // "z/x/y" -> loading | loaded | failed | aborted
function track(side, key, state) {
  records[side].set(key, state);
}
function status(side) {
  const out = { loaded: 0, failed: 0, pending: 0, aborted: 0 };
  for (const s of records[side].values()) {
    if (s === "loaded") out.loaded++;
    else if (s === "failed") out.failed++;
    else if (s === "loading") out.pending++;
    else if (s === "aborted") out.aborted++;
  }
  if (side === "tilefetch") {
    // The client knows best what is still under way (a map's events can arrive out of order).
    const busy = Object.values(client.stats()).reduce((n, s) => n + s.inFlight + s.queued, 0);
    out.pending = Math.max(out.pending, busy);
  }
  return out;
}

// ---------------------------------------------------------------- maps

const config = await (await fetch("/config.json")).json();
let generation = 0;
const templates = () => {
  // A new query per reload, so no cache (the map's or the browser's) answers.
  const q = `?v=${generation}`;
  return { tilefetch: config.tiles.tilefetch + q, plain: config.tiles.plain + q };
};
const client = new TileClient({});
const mod = await LIBS[lib]();
const maps = await mod.createMaps({ tfEl: $("map-tf"), plainEl: $("map-plain"), client, templates: templates(), track });

$("lib").value = lib;
$("lib").addEventListener("change", () => {
  location.search = `?lib=${$("lib").value}`;
});
$("reload").addEventListener("click", reload);
function reload() {
  generation += 1;
  records.tilefetch.clear();
  records.plain.clear();
  maps.reload(templates());
}

// ---------------------------------------------------------------- fault controls

const CONTROLS = [
  { name: "errorRate", label: "503 errors", min: 0, max: 100, step: 1, unit: "%" },
  { name: "serviceExceptionRate", label: "200 + ServiceException", min: 0, max: 100, step: 1, unit: "%" },
  { name: "hangRate", label: "hang (never answer)", min: 0, max: 50, step: 1, unit: "%" },
  { name: "slowRate", label: "slow tail", min: 0, max: 100, step: 1, unit: "%" },
  { name: "slowMs", label: "slow tail delay", min: 0, max: 10000, step: 250, unit: " ms" },
  { name: "stormOn", label: "429 storm", type: "checkbox" },
  { name: "stormRate", label: "storm: bucket rate", min: 1, max: 50, step: 1, unit: " req/s" },
  { name: "retryAfterS", label: "storm: Retry-After", min: 0, max: 10, step: 1, unit: " s" },
  { name: "outageS", label: "outage length", min: 1, max: 30, step: 1, unit: " s", local: true },
];
const form = $("faults");
const inputs = {};
let pending = {};
let timer = null;
function post(patch) {
  Object.assign(pending, patch);
  clearTimeout(timer);
  timer = setTimeout(async () => {
    const body = JSON.stringify(pending);
    pending = {};
    const r = await fetch("/faults", { method: "POST", headers: { "Content-Type": "application/json" }, body });
    showFaults(await r.json());
  }, 120);
}
for (const c of CONTROLS) {
  const label = document.createElement("label");
  label.textContent = c.label;
  const input = document.createElement("input");
  input.name = c.name;
  input.id = `f-${c.name}`;
  label.htmlFor = input.id;
  const out = document.createElement("output");
  if (c.type === "checkbox") {
    input.type = "checkbox";
    input.addEventListener("change", () => post({ [c.name]: input.checked }));
  } else {
    Object.assign(input, { type: "range", min: c.min, max: c.max, step: c.step });
    input.addEventListener("input", () => {
      out.value = `${input.value}${c.unit}`;
      if (!c.local) post({ [c.name]: Number(input.value) });
    });
  }
  inputs[c.name] = { input, out, c };
  form.append(label, input, out);
}
inputs.outageS.input.value = 5;
inputs.outageS.out.value = "5 s";
const buttons = document.createElement("div");
buttons.className = "buttons";
const mk = (text, onclick) => {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = text;
  b.addEventListener("click", onclick);
  buttons.append(b);
  return b;
};
const outageButton = mk("start outage", () => post({ outageS: Number(inputs.outageS.input.value) }));
mk("no faults", () => post({ reset: true }));
mk("defaults", () => post({ ...config.defaults, outageS: 0 }));
form.append(buttons);

function showFaults(f) {
  for (const [name, { input, out, c }] of Object.entries(inputs)) {
    if (c.local || f[name] === undefined) continue;
    if (c.type === "checkbox") input.checked = Boolean(f[name]);
    else {
      input.value = f[name];
      out.value = `${f[name]}${c.unit}`;
    }
  }
  outageButton.textContent = f.outageLeftS > 0 ? `outage: ${f.outageLeftS.toFixed(1)} s left` : "start outage";
}

// ---------------------------------------------------------------- stats and plot

const STATS_COLS = [
  ["requests", (s) => s.requests],
  ["attempts", (s) => s.attempts],
  ["retries", (s) => s.retries],
  ["ok", (s) => s.successes],
  ["give-ups", (s) => giveUps(s)],
  ["aborted", (s) => s.aborted],
  ["in flight", (s) => s.inFlight],
  ["queued", (s) => s.queued],
  ["breaker", (s) => s.breaker.state],
  ["paused", (s) => (s.pausedUntil && s.pausedUntil > Date.now() ? `${((s.pausedUntil - Date.now()) / 1000).toFixed(1)} s` : "")],
  ["rate", (s) => (s.rateLimitPerSecond == null ? "" : `${s.rateLimitPerSecond.toFixed(1)}/s`)],
  ["p50 / p95", (s) => (s.latencyMs.p50 == null ? "" : `${s.latencyMs.p50} / ${s.latencyMs.p95} ms`)],
];
const giveUps = (s) => Object.values(s.giveUps).reduce((a, b) => a + b, 0);

function renderTable(table, head, rows) {
  table.replaceChildren();
  const tr = table.insertRow();
  for (const h of head) {
    const th = document.createElement("th");
    th.textContent = h;
    tr.append(th);
  }
  for (const row of rows) {
    const r = table.insertRow();
    for (const cell of row) {
      const td = r.insertCell();
      if (cell && typeof cell === "object") {
        td.textContent = cell.text;
        td.className = cell.className;
      } else td.textContent = cell ?? "";
    }
  }
}

const HISTORY = 120; // samples, 500 ms apart: one minute
const series = []; // {attempts, retries, giveUps, breaker}: per second, breaker 0 closed / 1 half-open / 2 open
let last = null;
const BREAKER = { closed: 0, "half-open": 1, open: 2 };

function sample(stats) {
  const hosts = Object.values(stats);
  const total = {
    attempts: hosts.reduce((a, s) => a + s.attempts, 0),
    retries: hosts.reduce((a, s) => a + s.retries, 0),
    giveUps: hosts.reduce((a, s) => a + giveUps(s), 0),
    t: performance.now(),
  };
  const breaker = Math.max(0, ...hosts.map((s) => BREAKER[s.breaker.state] ?? 0));
  if (last) {
    const dt = (total.t - last.t) / 1000;
    const rate = (k) => Math.max(0, (total[k] - last[k]) / dt);
    series.push({ attempts: rate("attempts"), retries: rate("retries"), giveUps: rate("giveUps"), breaker });
    if (series.length > HISTORY) series.shift();
  }
  last = total;
}

const LINES = [
  ["attempts", "#2962ff"],
  ["retries", "#ef6c00"],
  ["giveUps", "#c62828"],
];
function plot() {
  const canvas = $("plot");
  const ctx = canvas.getContext("2d");
  const W = canvas.width;
  const H = canvas.height;
  const band = 12; // breaker strip at the bottom
  const top = 18;
  const bottom = H - band - 16;
  ctx.clearRect(0, 0, W, H);
  const max = Math.max(5, ...series.flatMap((p) => LINES.map(([k]) => p[k])));
  const nice = 10 ** Math.floor(Math.log10(max));
  const yMax = Math.ceil(max / nice) * nice;
  const x = (i) => 34 + ((W - 40) * (i + HISTORY - series.length)) / (HISTORY - 1);
  const y = (v) => bottom - ((bottom - top) * v) / yMax;
  ctx.font = "11px system-ui, sans-serif";
  ctx.strokeStyle = "#e3e3ea";
  ctx.fillStyle = "#667";
  ctx.lineWidth = 1;
  for (let i = 0; i <= 4; i++) {
    const v = (yMax * i) / 4;
    ctx.beginPath();
    ctx.moveTo(34, y(v) + 0.5);
    ctx.lineTo(W - 6, y(v) + 0.5);
    ctx.stroke();
    ctx.fillText(String(Math.round(v * 10) / 10), 2, y(v) + 4);
  }
  for (const [k, colour] of LINES) {
    ctx.strokeStyle = colour;
    ctx.lineWidth = 2;
    ctx.beginPath();
    series.forEach((p, i) => {
      if (i) ctx.lineTo(x(i), y(p[k]));
      else ctx.moveTo(x(i), y(p[k]));
    });
    ctx.stroke();
  }
  // breaker state strip
  const colours = ["#7cc47c", "#f0b64a", "#e05252"];
  const bw = (W - 40) / (HISTORY - 1);
  series.forEach((p, i) => {
    ctx.fillStyle = colours[p.breaker];
    ctx.fillRect(x(i) - bw / 2, H - band - 2, bw + 0.5, band);
  });
  ctx.fillStyle = "#667";
  ctx.fillText("breaker", 2, H - 4);
  // legend
  let lx = 40;
  for (const [k, colour] of [...LINES, ["breaker: closed", colours[0]], ["half-open", colours[1]], ["open", colours[2]]]) {
    ctx.fillStyle = colour;
    ctx.fillRect(lx, 4, 10, 10);
    ctx.fillStyle = "#333";
    const label = k === "giveUps" ? "give-ups/s" : LINES.some(([n]) => n === k) ? `${k}/s` : k;
    ctx.fillText(label, lx + 13, 13);
    lx += ctx.measureText(label).width + 26;
  }
  ctx.fillStyle = "#667";
  ctx.fillText("last 60 s", W - 50, bottom + 13);
}

const SERVER_COLS = ["requests", "ok", "503", "serviceException", "429", "outage", "hang", "slow", "aborted"];
async function tick() {
  const stats = client.stats();
  sample(stats);
  plot();
  renderTable(
    $("stats"),
    ["host", ...STATS_COLS.map(([h]) => h)],
    Object.entries(stats).map(([host, s]) => [host, ...STATS_COLS.map(([h, f]) => (h === "breaker" ? { text: f(s), className: s.breaker.state } : f(s)))]),
  );
  const kinds = {};
  for (const s of Object.values(stats)) for (const [k, v] of Object.entries(s.giveUps)) kinds[k] = (kinds[k] ?? 0) + v;
  $("giveups").textContent = Object.keys(kinds).length
    ? `give-ups by kind: ${Object.entries(kinds)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`
    : "no give-ups";
  for (const side of ["tilefetch", "plain"]) {
    const s = status(side);
    $(side === "tilefetch" ? "tf-status" : "plain-status").textContent = `${s.loaded} loaded · ${s.failed} failed · ${s.pending} pending`;
  }
  try {
    const r = await (await fetch("/server-stats")).json();
    showFaults(r.faults);
    renderTable(
      $("server"),
      ["to the map", ...SERVER_COLS.map((c) => (c === "serviceException" ? "200 + XML" : c))],
      ["tilefetch", "plain"].map((side) => [side, ...SERVER_COLS.map((c) => r.counts[side]?.[c] ?? 0)]),
    );
  } catch {
    // the server went away: keep the last numbers
  }
}
setInterval(tick, 500);
await tick();

window.demo = {
  lib,
  client,
  TileError,
  status: () => ({ tilefetch: status("tilefetch"), plain: status("plain") }),
  reload,
  records: () => ({ tilefetch: Object.fromEntries(records.tilefetch), plain: Object.fromEntries(records.plain) }),
};
