#!/usr/bin/env node
// The demo: a page with two maps of the same view side by side, one loading its tiles through
// tilefetch (one shared TileClient), one through the map library's plain loader, over a loopback
// tile server whose faults are switched live from the page.
//
//   node www/serve.mjs [--port 8080] [--seed 7] [--lib ol|leaflet|maplibre] [--check]
//
// Builds the page (www/index.html + www/demo.js, with the map libraries from node_modules and
// tilefetch from pkg/, which must be built already) with Vite into a temporary folder, then
// serves on 127.0.0.1:
//   PORT          the page, GET/POST /faults (JSON), GET /server-stats, GET /tiles/{z}/{x}/{y}.png
//   two more      tile ports, one per map (each map gets its own origin, so the plain map's hung
//                 connections do not take the browser's per-origin connection slots of the other)
// and prints `demo: http://127.0.0.1:PORT/`. Runs until Ctrl-C / SIGTERM.
//
// --check: also opens the page in headless Chromium, waits until the maps show tiles, saves
// test-output/demo.png, prints one summary line and exits (0 when the tilefetch map settled with
// tiles and the page threw nothing, 1 otherwise).
import http from "node:http";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { performance } from "node:perf_hooks";
import { prng, serviceExceptionXml, takeBucketToken } from "../tests/server/fault-server.mjs";
import { labelledTilePng } from "./tiles.mjs";
import { buildPage } from "./build-page.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const WWW = path.join(ROOT, "www");

// ---------------------------------------------------------------- arguments

function parseArgs(argv) {
  const out = { port: 8080, seed: 7, lib: "ol", check: false, timeout: 40 };
  for (let i = 0; i < argv.length; i++) {
    const [name, inline] = argv[i].includes("=") ? argv[i].split(/=(.*)/s) : [argv[i], undefined];
    const val = () => (inline !== undefined ? inline : argv[++i]);
    if (name === "--port") out.port = Number(val());
    else if (name === "--seed") out.seed = Number(val());
    else if (name === "--lib") out.lib = val();
    else if (name === "--timeout") out.timeout = Number(val());
    else if (name === "--check") out.check = true;
    else if (name === "--help" || name === "-h") {
      process.stdout.write("usage: node www/serve.mjs [--port 8080] [--seed 7] [--lib ol|leaflet|maplibre] [--check] [--timeout 40]\n");
      process.exit(0);
    } else {
      process.stderr.write(`serve.mjs: unknown argument ${argv[i]}\n`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(out.port) || out.port < 0 || out.port > 65535) fail(`--port must be 0…65535`);
  if (!["ol", "leaflet", "maplibre"].includes(out.lib)) fail(`--lib must be ol, leaflet or maplibre`);
  return out;
}

function fail(msg) {
  process.stderr.write(`serve.mjs: ${msg}\n`);
  process.exit(2);
}

// ---------------------------------------------------------------- faults

/** The defaults: enough trouble that the plain map shows holes. */
export const DEFAULT_FAULTS = {
  errorRate: 25, // % of tile requests answered 503
  serviceExceptionRate: 10, // % answered 200 + an OGC ServiceException XML
  hangRate: 2, // % never answered
  slowRate: 5, // % delayed by slowMs
  slowMs: 3000,
  stormOn: false, // 429 + Retry-After when the token bucket is empty
  stormRate: 5, // bucket refill, requests per second (burst = the same)
  retryAfterS: 1,
  outageS: 0, // (write-only) starts an outage of this many seconds: every request 503
};

function clampNum(v, lo, hi, fallback) {
  const n = Number(v);
  return Number.isFinite(n) ? Math.min(hi, Math.max(lo, n)) : fallback;
}

export function createTileService({ seed = 7 } = {}) {
  const faults = { ...DEFAULT_FAULTS };
  let outageUntil = 0; // performance.now() ms
  let counter = 0; // seeded randomness: the n-th tile request draws prng(seed, stream, n)
  const bucket = { tokens: faults.stormRate, last: performance.now(), rate: faults.stormRate, burst: faults.stormRate };
  const hanging = new Set();
  const timers = new Set();
  const counts = {}; // role -> {requests, ok, "503", "429", outage, serviceException, hang, slow, aborted}

  const count = (role, what) => {
    const c = (counts[role] ??= { requests: 0, ok: 0, 503: 0, 429: 0, outage: 0, serviceException: 0, hang: 0, slow: 0, aborted: 0 });
    c[what] += 1;
  };

  function setFaults(patch) {
    const p = patch ?? {};
    if ("errorRate" in p) faults.errorRate = clampNum(p.errorRate, 0, 100, faults.errorRate);
    if ("serviceExceptionRate" in p) faults.serviceExceptionRate = clampNum(p.serviceExceptionRate, 0, 100, faults.serviceExceptionRate);
    if ("hangRate" in p) faults.hangRate = clampNum(p.hangRate, 0, 100, faults.hangRate);
    if ("slowRate" in p) faults.slowRate = clampNum(p.slowRate, 0, 100, faults.slowRate);
    if ("slowMs" in p) faults.slowMs = clampNum(p.slowMs, 0, 60_000, faults.slowMs);
    if ("stormOn" in p) faults.stormOn = Boolean(p.stormOn);
    if ("stormRate" in p) {
      faults.stormRate = clampNum(p.stormRate, 0, 1000, faults.stormRate);
      bucket.tokens = Math.min(bucket.tokens, faults.stormRate);
      bucket.rate = bucket.burst = faults.stormRate;
    }
    if ("retryAfterS" in p) faults.retryAfterS = clampNum(p.retryAfterS, 0, 3600, faults.retryAfterS);
    if ("outageS" in p) {
      const s = clampNum(p.outageS, 0, 3600, 0);
      outageUntil = s > 0 ? performance.now() + s * 1000 : 0;
    }
    if (p.reset === true) Object.assign(faults, DEFAULT_FAULTS, { errorRate: 0, serviceExceptionRate: 0, hangRate: 0, slowRate: 0 });
    return state();
  }

  function state() {
    const left = Math.max(0, outageUntil - performance.now());
    return { ...faults, outageS: undefined, outageLeftS: Math.round(left / 100) / 10 };
  }

  function takeToken() {
    const t = performance.now();
    return takeBucketToken(bucket, t);
  }

  /** Answers GET /tiles/z/x/y.png for the map `role` ("tilefetch", "plain" or "page"). */
  function handle(req, res, [z, x, y], role, cors) {
    const n = ++counter;
    const draw = (stream) => prng(seed, stream, n) * 100;
    count(role, "requests");
    const send = (status, type, body, extra = {}) => {
      const buf = Buffer.isBuffer(body) ? body : Buffer.from(body);
      res.writeHead(status, { ...cors, "Content-Type": type, "Content-Length": String(buf.length), "Cache-Control": "no-store", ...extra });
      res.end(req.method === "HEAD" ? undefined : buf);
    };
    res.on("close", () => {
      if (!res.writableFinished) count(role, "aborted");
    });
    if (performance.now() < outageUntil) {
      count(role, "outage");
      return send(503, "text/plain; charset=utf-8", "outage\n");
    }
    if (faults.stormOn && !takeToken()) {
      count(role, "429");
      return send(429, "text/plain; charset=utf-8", "429 Too Many Requests\n", { "Retry-After": String(faults.retryAfterS) });
    }
    if (draw("hang") < faults.hangRate) {
      count(role, "hang");
      hanging.add(res);
      res.on("close", () => hanging.delete(res));
      return; // never answered
    }
    if (draw("error") < faults.errorRate) {
      count(role, "503");
      return send(503, "text/plain; charset=utf-8", "503 Service Unavailable\n");
    }
    const answer = () => {
      if (res.destroyed || res.writableEnded) return;
      if (draw("sexml") < faults.serviceExceptionRate) {
        count(role, "serviceException");
        return send(200, "application/vnd.ogc.se_xml", serviceExceptionXml("NoApplicableCode"));
      }
      count(role, "ok");
      send(200, "image/png", labelledTilePng(z, x, y));
    };
    if (faults.slowMs > 0 && draw("slow") < faults.slowRate) {
      count(role, "slow");
      const t = setTimeout(() => {
        timers.delete(t);
        answer();
      }, faults.slowMs);
      timers.add(t);
    } else answer();
  }

  return {
    handle,
    setFaults,
    state,
    counts: () => structuredClone(counts),
    stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const res of hanging) res.destroy();
      hanging.clear();
    },
  };
}

// ---------------------------------------------------------------- page build

/** Vite-builds www/index.html (and the map modules it imports) into `outDir`. */
function buildDemoPage(outDir) {
  return buildPage({ root: WWW, input: path.join(WWW, "index.html"), outDir });
}

// ---------------------------------------------------------------- servers

const MIME = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".wasm": "application/wasm",
  ".json": "application/json; charset=utf-8",
  ".png": "image/png",
  ".svg": "image/svg+xml",
  ".map": "application/json; charset=utf-8",
};
const TILE_RE = /^\/tiles\/(\d+)\/(\d+)\/(\d+)\.png$/;
const CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Headers": "*",
  "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
  "Access-Control-Expose-Headers": "Retry-After",
  "Access-Control-Max-Age": "600",
};

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      resolve(server.address().port);
    });
  });
}

function trackSockets(server) {
  const sockets = new Set();
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  return () =>
    new Promise((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections?.();
      for (const s of sockets) s.destroy();
    });
}

function readJson(req, limit = 64 * 1024) {
  return new Promise((resolve, reject) => {
    let size = 0;
    const parts = [];
    req.on("data", (c) => {
      size += c.length;
      if (size > limit) reject(new Error("body too large"));
      else parts.push(c);
    });
    req.on("end", () => {
      try {
        resolve(parts.length ? JSON.parse(Buffer.concat(parts).toString("utf8")) : {});
      } catch (e) {
        reject(e);
      }
    });
    req.on("error", reject);
  });
}

/**
 * Starts everything. Returns {url, tiles, close()}.
 * @param {{port?: number, seed?: number, log?: (line: string) => void}} options
 */
export async function startDemo({ port = 0, seed = 7 } = {}) {
  if (!fs.existsSync(path.join(ROOT, "pkg/gen/tilefetch_bg.wasm"))) {
    throw new Error("pkg/gen/tilefetch_bg.wasm is missing: build the package first (scripts/build.sh), then rerun");
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-demo-"));
  const dist = path.join(tmp, "dist");
  const closers = [];
  const service = createTileService({ seed });
  const close = async () => {
    service.stop();
    await Promise.all(closers.map((c) => c()));
    fs.rmSync(tmp, { recursive: true, force: true });
  };
  try {
    await buildDemoPage(dist);
    const realDist = fs.realpathSync(dist);

    const tileServer = (role) =>
      http.createServer((req, res) => {
        const url = new URL(req.url, "http://demo.invalid");
        if (req.method === "OPTIONS") {
          res.writeHead(204, CORS);
          return res.end();
        }
        const m = TILE_RE.exec(url.pathname);
        if (m && (req.method === "GET" || req.method === "HEAD")) {
          req.resume();
          return service.handle(req, res, [Number(m[1]), Number(m[2]), Number(m[3])], role, CORS);
        }
        res.writeHead(404, { ...CORS, "Content-Type": "text/plain" });
        res.end("not found\n");
      });

    const tilePorts = {};
    for (const role of ["tilefetch", "plain"]) {
      const srv = tileServer(role);
      closers.push(trackSockets(srv));
      tilePorts[role] = await listen(srv, 0);
    }

    const page = http.createServer(async (req, res) => {
      let url;
      try {
        url = new URL(req.url, "http://demo.invalid");
      } catch {
        res.writeHead(400);
        return res.end();
      }
      const json = (status, body) => {
        const buf = Buffer.from(JSON.stringify(body));
        res.writeHead(status, { "Content-Type": "application/json", "Content-Length": String(buf.length), "Cache-Control": "no-store" });
        res.end(buf);
      };
      const m = TILE_RE.exec(url.pathname);
      if (m) {
        req.resume();
        return service.handle(req, res, [Number(m[1]), Number(m[2]), Number(m[3])], "page", CORS);
      }
      if (url.pathname === "/faults") {
        if (req.method === "POST") {
          try {
            return json(200, service.setFaults(await readJson(req)));
          } catch (e) {
            return json(400, { error: String(e.message ?? e) });
          }
        }
        return json(200, service.state());
      }
      if (url.pathname === "/server-stats") return json(200, { faults: service.state(), counts: service.counts() });
      if (url.pathname === "/config.json") {
        return json(200, {
          tiles: {
            tilefetch: `http://127.0.0.1:${tilePorts.tilefetch}/tiles/{z}/{x}/{y}.png`,
            plain: `http://127.0.0.1:${tilePorts.plain}/tiles/{z}/{x}/{y}.png`,
          },
          defaults: DEFAULT_FAULTS,
        });
      }
      if (req.method !== "GET" && req.method !== "HEAD") {
        res.writeHead(405, { Allow: "GET, HEAD, POST" });
        return res.end();
      }
      // Static files of the built page.
      let pathname = decodeURIComponent(url.pathname);
      if (pathname.endsWith("/")) pathname += "index.html";
      const file = path.join(realDist, pathname);
      if (pathname.includes("\0") || !file.startsWith(realDist + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
        res.writeHead(404, { "Content-Type": "text/plain" });
        return res.end("not found\n");
      }
      const body = fs.readFileSync(file);
      res.writeHead(200, {
        "Content-Type": MIME[path.extname(file)] ?? "application/octet-stream",
        "Content-Length": String(body.length),
        "Cache-Control": "no-store",
      });
      res.end(req.method === "HEAD" ? undefined : body);
    });
    closers.push(trackSockets(page));
    const pagePort = await listen(page, port);
    return { url: `http://127.0.0.1:${pagePort}`, tilePorts, service, close };
  } catch (e) {
    await close();
    throw e;
  }
}

// ---------------------------------------------------------------- --check

async function check(demo, { lib, timeout }) {
  const { launchBrowser, OUTPUT_DIR } = await import("../tests/browser/helpers.mjs");
  const t0 = performance.now();
  const browser = await launchBrowser({ webgl: lib === "maplibre" });
  try {
    const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
    const page = await context.newPage();
    const problems = [];
    page.on("pageerror", (e) => problems.push(`pageerror: ${e.message}`));
    page.on("crash", () => problems.push("page crashed"));
    await page.goto(`${demo.url}/?lib=${lib}`);
    // Done when every tile the tilefetch map asked for has ended, and it has loaded some.
    let status = null;
    const deadline = Date.now() + timeout * 1000;
    let settledSince = null;
    while (Date.now() < deadline) {
      status = await page.evaluate(() => window.demo?.status?.() ?? null).catch(() => null);
      const done = status && status.tilefetch.loaded > 0 && status.tilefetch.pending === 0;
      if (done) {
        settledSince ??= Date.now();
        if (Date.now() - settledSince >= 1500) break; // let the plot and tables catch up
      } else settledSince = null;
      if (problems.length) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    fs.mkdirSync(OUTPUT_DIR, { recursive: true });
    const shot = path.join(OUTPUT_DIR, "demo.png");
    await page.screenshot({ path: shot, fullPage: true });
    const tf = status?.tilefetch ?? { loaded: 0, failed: 0, pending: "?" };
    const pl = status?.plain ?? { loaded: 0, failed: 0, pending: "?" };
    const counts = demo.service.counts();
    // The tilefetch map settled with tiles on it, and the page threw nothing. (Its failures are
    // reported, not failed on: with random faults a tile can legitimately run out of deadline.)
    const ok = problems.length === 0 && tf.loaded > 0 && tf.pending === 0;
    const secs = ((performance.now() - t0) / 1000).toFixed(1);
    process.stdout.write(
      `demo check ${ok ? "ok" : "FAILED"} (${lib}, ${secs} s): tilefetch ${tf.loaded} tiles loaded, ${tf.failed} failed, ${tf.pending} pending` +
        ` in ${counts.tilefetch?.requests ?? 0} requests; plain ${pl.loaded} loaded, ${pl.failed} failed, ${pl.pending} pending` +
        ` in ${counts.plain?.requests ?? 0} requests; screenshot ${path.relative(ROOT, shot)}` +
        (problems.length ? `; ${problems.join("; ")}` : "") +
        "\n",
    );
    await context.close();
    return ok;
  } finally {
    await browser.close();
  }
}

// ---------------------------------------------------------------- main

const isMain = process.argv[1] && fileURLToPath(import.meta.url) === fs.realpathSync(process.argv[1]);
if (isMain) {
  const args = parseArgs(process.argv.slice(2));
  let demo;
  try {
    demo = await startDemo({ port: args.port, seed: args.seed });
  } catch (e) {
    process.stderr.write(`serve.mjs: ${e.message}\n`);
    process.exit(1);
  }
  if (args.check) {
    let ok = false;
    try {
      ok = await check(demo, args);
    } catch (e) {
      process.stderr.write(`serve.mjs --check: ${e.stack ?? e}\n`);
    }
    await demo.close();
    process.exit(ok ? 0 : 1);
  }
  process.stdout.write(`demo: ${demo.url}/${args.lib === "ol" ? "" : `?lib=${args.lib}`}\n`);
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await demo.close();
    process.exit(0);
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
