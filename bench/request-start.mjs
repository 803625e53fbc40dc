#!/usr/bin/env node
// What it costs a page's main thread to start a tile request: `fetch()` (what the adapters call,
// through fetchTile) against an `<img>`'s src (what Leaflet's and OpenLayers' own loaders set),
// in Chromium as the map-view benchmark drives it (Playwright, so DevTools is attached and
// instruments every request) and in Chromium launched on its own (no DevTools: as a user runs it).
// The page starts 8 requests at once, as a map's view does, to new tiles of the loopback fault
// server (0–5 ms), and times the main thread from the first start until the starts are done (an
// image's request starts in a microtask after its src is set: the timing includes it); then waits
// for every answer. Batches alternate between the two ways. Writes bench/out/request-start.json.
//
//   node bench/request-start.mjs [--batches 40]
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CHROMIUM, launchBrowser } from "../tests/browser/helpers.mjs";
import { startFaultServer } from "../tests/server/fault-server.mjs";
import { option } from "./cli.mjs";
import { median } from "./stats.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PER_BATCH = 8;
const WARM_UP = 4;

/** The page: `batches` batches per way after WARM_UP of each, its timings POSTed to /result. */
function pageHtml(tileServer, batches) {
  return `<!doctype html><meta charset="utf-8"><title>request start</title><script type="module">
const server = ${JSON.stringify(tileServer)};
const perBatch = ${PER_BATCH};
let x = 0;
const url = () => server + "/tile/14/" + (1000 + x++) + "/7000.png?run=rs&delay=0&delayjitter=5";
const ways = {
  async fetch() {
    const t0 = performance.now();
    const started = [];
    for (let i = 0; i < perBatch; i++) started.push(fetch(url()));
    await null;
    const ms = performance.now() - t0;
    await Promise.all(started.map((p) => p.then((r) => r.arrayBuffer())));
    return ms;
  },
  async img() {
    const t0 = performance.now();
    const started = [];
    for (let i = 0; i < perBatch; i++) {
      const image = new Image();
      started.push(new Promise((resolve, reject) => { image.onload = resolve; image.onerror = reject; }));
      image.src = url();
    }
    await null;
    const ms = performance.now() - t0;
    await Promise.all(started);
    return ms;
  },
};
const out = { fetch: [], img: [] };
for (let b = 0; b < ${WARM_UP} + ${batches}; b++) {
  for (const way of b % 2 ? ["img", "fetch"] : ["fetch", "img"]) {
    const ms = await ways[way]();
    if (b >= ${WARM_UP}) out[way].push(ms);
    await new Promise((r) => setTimeout(r, 30));
  }
}
await fetch("/result", { method: "POST", body: JSON.stringify(out) });
</script>`;
}

/** Serves the page and takes its one result; `visit(url)` opens it. */
async function measure(html, visit) {
  let take;
  const result = new Promise((resolve) => {
    take = resolve;
  });
  const web = http.createServer((req, res) => {
    if (req.url === "/result" && req.method === "POST") {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        res.end();
        take(JSON.parse(body));
      });
      return;
    }
    res.writeHead(200, { "content-type": "text/html" });
    res.end(html);
  });
  await new Promise((resolve) => web.listen(0, "127.0.0.1", resolve));
  try {
    const stop = await visit(`http://127.0.0.1:${web.address().port}/`);
    const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error("the page sent no result in 120 s")), 120_000).unref());
    try {
      return await Promise.race([result, timeout]);
    } finally {
      await stop();
    }
  } finally {
    web.close();
  }
}

/** Chromium under Playwright, as bench/mapview.mjs runs it. */
async function withDevTools(url) {
  const browser = await launchBrowser();
  const page = await browser.newPage();
  await page.goto(url);
  return () => browser.close();
}

/** Chromium launched on its own: no DevTools protocol client. */
async function withoutDevTools(url) {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-request-start-"));
  // A process group of its own: Chromium's helper processes (zygote, renderer, GPU) outlive the
  // browser's own exit and went on writing the profile as it was removed (ENOTEMPTY, a whole
  // bench lost); the group is stopped, and waited for, as one.
  const child = spawn(CHROMIUM, ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", `--user-data-dir=${profile}`, url], {
    stdio: "ignore",
    detached: true,
  });
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const group = (signal) => {
    try {
      process.kill(-child.pid, signal);
      return true;
    } catch {
      return false; // ESRCH: no process of the group is left
    }
  };
  return async () => {
    group("SIGTERM");
    await exited;
    for (let waited = 0; group(0) && waited < 5000; waited += 50) await new Promise((resolve) => setTimeout(resolve, 50));
    group("SIGKILL");
    fs.rmSync(profile, { recursive: true, force: true, maxRetries: 10, retryDelay: 200 });
  };
}

async function main() {
  const batches = Number(option("batches", 40));
  const srv = await startFaultServer({ seed: 1 });
  const runs = {};
  try {
    const html = pageHtml(srv.url, batches);
    for (const [name, visit] of [
      ["devtools", withDevTools],
      ["plain", withoutDevTools],
    ]) {
      const got = await measure(html, visit);
      runs[name] = Object.fromEntries(
        Object.entries(got).map(([way, ms]) => [way, { batches: ms.length, usPerRequest: (median(ms) * 1000) / PER_BATCH, msPerBatch: ms }]),
      );
      process.stderr.write(
        `  ${name.padEnd(8)} µs of main thread per request started (median of ${batches} batches of ${PER_BATCH}): fetch ${runs[name].fetch.usPerRequest.toFixed(0)}, <img> ${runs[name].img.usPerRequest.toFixed(0)}\n`,
      );
    }
  } finally {
    await srv.close();
  }
  fs.mkdirSync(path.join(HERE, "out"), { recursive: true });
  fs.writeFileSync(path.join(HERE, "out", "request-start.json"), JSON.stringify({ perBatch: PER_BATCH, batches, runs }, null, 1));
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
