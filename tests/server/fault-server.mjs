#!/usr/bin/env node
// Loopback fault-injecting tile server for the tilefetch test suites.
// ESM, Node >= 20, node: built-ins only.
//
//   import { startFaultServer, tilePng } from "./fault-server.mjs";
//   const srv = await startFaultServer({ seed: 1 });
//   await fetch(`${srv.url}/tile/3/1/2.png?run=t1&f=503&n=2`);
//   srv.requests("t1/3/1/2"); srv.aborted("t1"); await srv.close();
//   srv.concurrent("t1"); srv.peakConcurrent("t1"); srv.outage("t1", 3000); srv.now();
//
// CLI: node tests/server/fault-server.mjs [--port 0] [--seed 1] [--host 127.0.0.1] [--verbose]
//   prints `FAULT_SERVER_URL=http://127.0.0.1:PORT` as its first stdout line and runs until
//   SIGTERM / SIGINT / end of stdin (stdin is only watched when it is a pipe or socket, so
//   `node fault-server.mjs &` with stdin on /dev/null keeps running).
//
// Route: GET /tile/{z}/{x}/{y}.png?run=R&f=FAULT&p=P&n=N&ra=RA&delay=MS&delayjitter=MS&slowp=P&slowms=MS&code=C
//   tile key = `${run}/${z}/${x}/${y}`; per-key attempt counter n is 1-based.
//   Every response carries X-Fault-Attempt (n for that key) and X-Fault (fault applied or "none").
// Also: GET /count?run=R -> {"requests":N,"aborted":N,"concurrent":N,"peakConcurrent":N};
//   GET /health -> "ok"; OPTIONS * -> 204.
//
// Faults (f=): 503 500 502 504 408 429 (+ Retry-After from ra), 404 403 400 410, 204 (no body),
//   hang (never answers), reset (200 + full Content-Length, half the body, socket destroyed),
//   truncate (200 chunked, first half of the PNG, ends normally: only the missing IEND tells),
//   shortlen (200, the whole PNG but Content-Length + 1024, then socket.end()),
//   sexml / owsxml (200 OGC exception reports, code from `code`), html (200 text/html 502 page),
//   json (200 {"error":"quota"}), gzip (200 image/png, Content-Encoding: gzip),
//   bucket (a rate-limited upstream: a token bucket per run, created on the run's first bucket
//     request full with `burst` tokens and refilled continuously at `rate` tokens/s up to `burst`;
//     a request that takes a token gets the tile (200), any other 429 + Retry-After from ra (none
//     without ra). rate= default 10, burst= default rate; the first request's values stay for the
//     run. The token is taken when the request arrives, so `delay` only delays the answer;
//     X-Fault and the log's fault: "bucket" when served, "bucket-429" when refused). stated=1: every
//     bucket answer states the bucket (draft-ietf-httpapi-ratelimit-headers): RateLimit-Policy
//     "tiles";q=<rate·w>;w=<burst/rate, whole seconds, at least 1> and RateLimit "tiles";r=<whole tokens left>;
//     t=<whole seconds until the next token, 0 when the bucket is full>.
//   window (a fixed-window quota per run, as many APIs count: windows of w= seconds (default 2)
//     from the run's first window request, q= requests (default 60) each, nothing coming back
//     before the window ends; a request within the quota gets the tile, any other 429 +
//     Retry-After: the whole seconds until the window ends; "window" / "window-429" in X-Fault and
//     the log). stated=1: every window answer states it as the draft reads a window:
//     RateLimit-Policy "tiles";q=<q>;w=<w> and RateLimit "tiles";r=<left>;t=<whole seconds until
//     the window ends>.
// huge (200 image/png, chunked: the PNG signature, then zeros up to `size` bytes, default 600 MiB,
//   written as the client reads), hugelen (the same with Content-Length: size), gzipbomb (200
//   image/png, Content-Encoding: gzip, a small body that inflates to `size` bytes, default 64 MiB).
//   The log entry's bytesSent counts the body bytes written (of huge and hugelen as far as the
//   client read; of any other answer with a body, the whole body).
// cors=0: the answer carries no Access-Control-* header (a server as MapServer and GeoServer ship).
// cookie=NAME: 403 text/plain (X-Fault: no-cookie) unless the request sends a cookie NAME, before
//   any fault or outage (a tile server behind a login).
// ra: "N" seconds as is | "date:N" IMF-fixdate N s ahead | "raw:TEXT" verbatim.
// p: probability (seeded PRNG over seed/key/n), n: only the first n requests of the key.
// cc=VALUE: every answer's Cache-Control is VALUE in place of no-store; cc=none: none is sent.
// age=S: healthy answers carry `Age: S` unless the query has `_tf` (a cache-busted request).
// delay=MS before every answer (delayjitter=MS adds a uniform [0, MS) to it); slowp=P + slowms=MS: a two-point slow tail;
//   tailms=XM (+ alpha=A, default 1; tailmaxms=MS, default 60000): a Pareto-distributed extra delay,
//   XM / U^(1/A) capped at tailmaxms, U seeded per key and attempt (a heavy tail: with A <= 1 its
//   mean is unbounded, so a retry after a timeout usually lands in the body of the distribution).
//
// Outage: srv.outage(run, ms, {status = 503, retryAfter}?) -> {start, end} (server ms, like log
//   `t`): every tile request of that run (key === run or starting with `${run}/`) that ARRIVES in
//   [start, end) is answered `status` text/plain "outage" (Retry-After only when given, X-Fault:
//   outage), whatever f says (no bucket token is
//   taken; `delay` still applies). Outages stack; reset() ends them. srv.now() = current server ms.
//
// Counting: only tile requests count (not OPTIONS, /count, /health). "aborted" = the client went
// away before the response finished (reset/shortlen cut by the server and close() do not count).
// log entries: {key, path, fault, outcome, t (ms since start, monotonic), n, method, headers,
//   status (the status sent; null while not yet answered and for hang/reset/shortlen, whose body
//   never completes), tDone (server ms when the response finished or closed; null while open),
//   delayMs (what delay, slowp and tailms added up to before answering)}.
//
// Concurrency: a tile request is open from its arrival until its response finishes or closes
// (client abort, reset, server close). srv.concurrent(prefix?) = open now, srv.peakConcurrent(
// prefix?) = the most ever open at once; prefix is a run, a full key or any `/`-aligned prefix of
// keys (`run/z`), none = every tile request. reset() clears them (requests still open are forgotten).

import http from "node:http";
import http2 from "node:http2";
import zlib from "node:zlib";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import fs from "node:fs";

// ---------------------------------------------------------------- PNG encoder

const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32(buf) {
  let c = 0xffffffff;
  for (let i = 0; i < buf.length; i++) c = CRC_TABLE[(c ^ buf[i]) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function chunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
export const TILE_SIZE = 256;

/**
 * Encode an 8-bit RGB image as a PNG Buffer. `rows(y)` returns row y's w*3 RGB bytes
 * (a function, so images made of repeated rows cost nothing to build).
 */
export function encodePngRgb(width, height, rows, text = null) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // colour type RGB
  ihdr[10] = 0; // compression
  ihdr[11] = 0; // filter
  ihdr[12] = 0; // interlace
  const stride = width * 3;
  const raw = Buffer.alloc((stride + 1) * height);
  for (let y = 0; y < height; y++) {
    raw[y * (stride + 1)] = 0; // filter type None
    raw.set(rows(y), y * (stride + 1) + 1);
  }
  const parts = [PNG_SIGNATURE, chunk("IHDR", ihdr)];
  if (text) {
    for (const [k, v] of Object.entries(text)) {
      parts.push(chunk("tEXt", Buffer.concat([Buffer.from(k, "latin1"), Buffer.from([0]), Buffer.from(v, "latin1")])));
    }
  }
  parts.push(chunk("IDAT", zlib.deflateSync(raw)), chunk("IEND", Buffer.alloc(0)));
  return Buffer.concat(parts);
}

// 32-bit FNV-1a followed by a murmur3 finaliser.
function hash32(str) {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const tileCache = new Map();
const gzipCache = new Map();

/**
 * The ground-truth tile: a real 256x256 RGB PNG, a solid colour derived from z/x/y
 * with a darker 1-px grid every 64 px plus the right/bottom edge, and a tEXt chunk
 * `tile=z/x/y` so every tile's bytes are unique. Deterministic and cached.
 */
export function tilePng(z, x, y) {
  const key = `${z}/${x}/${y}`;
  let png = tileCache.get(key);
  if (png) return png;
  const h = hash32(key);
  const base = [64 + (h & 0x7f) + 32, 64 + ((h >>> 8) & 0x7f) + 32, 64 + ((h >>> 16) & 0x7f) + 32];
  const dark = base.map((c) => Math.floor(c * 0.55));
  const isGrid = (i) => i % 64 === 0 || i === TILE_SIZE - 1;
  const gridRow = Buffer.alloc(TILE_SIZE * 3);
  const plainRow = Buffer.alloc(TILE_SIZE * 3);
  for (let px = 0; px < TILE_SIZE; px++) {
    gridRow.set(dark, px * 3);
    plainRow.set(isGrid(px) ? dark : base, px * 3);
  }
  png = encodePngRgb(TILE_SIZE, TILE_SIZE, (py) => (isGrid(py) ? gridRow : plainRow), { tile: key });
  tileCache.set(key, png);
  return png;
}

function tileGzip(z, x, y) {
  const key = `${z}/${x}/${y}`;
  let gz = gzipCache.get(key);
  if (!gz) {
    gz = zlib.gzipSync(tilePng(z, x, y));
    gzipCache.set(key, gz);
  }
  return gz;
}

// ---------------------------------------------------------------- seeded PRNG

/** Deterministic uniform [0,1) from (seed, key, n, stream). */
export function prng(seed, key, n, stream = "fault") {
  const a = hash32(`${seed}\u0000${key}\u0000${n}\u0000${stream}`);
  const b = hash32(`${stream}\u0001${n}\u0001${key}\u0001${seed}\u0001${a}`);
  // 53 bits of mantissa from two 32-bit hashes.
  return ((a >>> 0) * 2 ** 21 + (b >>> 11)) / 2 ** 53;
}

/**
 * The Pareto(xm, alpha) quantile at 1 - u, capped: xm / (1 - u)^(1/alpha) for u in [0, 1).
 * 1 - u is in (0, 1], so the result is finite before the cap; whole milliseconds.
 */
export function paretoDelay(u, xm, alpha, cap) {
  return Math.round(Math.min(cap, xm / (1 - u) ** (1 / alpha)));
}

// ---------------------------------------------------------------- fault bodies

const STATUS_TEXT = {
  204: "No Content",
  400: "Bad Request",
  403: "Forbidden",
  404: "Not Found",
  408: "Request Timeout",
  410: "Gone",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};
const RETRYABLE_FAULTS = new Set(["503", "500", "502", "504", "408", "429"]);
const PLAIN_FAULTS = new Set(["404", "403", "400", "410"]);
export const FAULTS = [
  ...RETRYABLE_FAULTS,
  ...PLAIN_FAULTS,
  "204",
  "hang",
  "reset",
  "truncate",
  "shortlen",
  "sexml",
  "owsxml",
  "html",
  "json",
  "gzip",
  "bucket",
  "window",
  "huge",
  "hugelen",
  "gzipbomb",
];

const HUGE_CHUNK = Buffer.alloc(64 * 1024);

/** A gzip stream that inflates to `size` bytes (zeros after the PNG signature); kept per size. */
const bombCache = new Map();
function gzipBomb(size) {
  let gz = bombCache.get(size);
  if (!gz) {
    const plain = Buffer.alloc(size);
    PNG_SIGNATURE.copy(plain);
    gz = zlib.gzipSync(plain, { level: 9 });
    bombCache.set(size, gz);
  }
  return gz;
}

function xmlEscape(s) {
  return String(s).replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]);
}

export function serviceExceptionXml(code = "NoApplicableCode") {
  return (
    `<?xml version="1.0"?>\n` +
    `<ServiceExceptionReport version="1.3.0" xmlns="http://www.opengis.net/ogc" ` +
    `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
    `xsi:schemaLocation="http://www.opengis.net/ogc http://schemas.opengis.net/wms/1.3.0/exceptions_1_3_0.xsd">\n` +
    `  <ServiceException code="${xmlEscape(code)}">\n` +
    `    msWMSLoadGetMapParams(): WMS server error. Fault injected by tilefetch fault server (${xmlEscape(code)}).\n` +
    `  </ServiceException>\n` +
    `</ServiceExceptionReport>\n`
  );
}

export function owsExceptionXml(code = "NoApplicableCode") {
  return (
    `<?xml version="1.0" encoding="UTF-8"?>\n` +
    `<ows:ExceptionReport xmlns:ows="http://www.opengis.net/ows/1.1" ` +
    `xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" ` +
    `xsi:schemaLocation="http://www.opengis.net/ows/1.1 http://schemas.opengis.net/ows/1.1.0/owsExceptionReport.xsd" ` +
    `version="1.0.0" xml:lang="en">\n` +
    `  <ows:Exception exceptionCode="${xmlEscape(code)}" locator="TileRow">\n` +
    `    <ows:ExceptionText>Fault injected by tilefetch fault server (${xmlEscape(code)}).</ows:ExceptionText>\n` +
    `  </ows:Exception>\n` +
    `</ows:ExceptionReport>\n`
  );
}

const HTML_502 =
  `<!DOCTYPE html>\n<html>\n<head><title>502 Bad Gateway</title></head>\n` +
  `<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n`;

function retryAfterValue(ra) {
  if (ra == null || ra === "") return null;
  if (ra.startsWith("date:")) {
    const s = Number(ra.slice(5));
    return new Date(Date.now() + s * 1000).toUTCString();
  }
  if (ra.startsWith("raw:")) return ra.slice(4);
  return ra;
}

// ---------------------------------------------------------------- server

const TILE_RE = /^\/tile\/(\d+)\/(\d+)\/(\d+)\.png$/;

function baseHeaders(extra = {}) {
  return {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Headers": "*",
    "Access-Control-Allow-Methods": "GET, HEAD, OPTIONS",
    "Access-Control-Expose-Headers": "*",
    "Access-Control-Max-Age": "600",
    "Cache-Control": "no-store",
    ...extra,
  };
}

function hasCookie(req, name) {
  return (req.headers.cookie ?? "").split(";").some((pair) => pair.trim().split("=")[0] === name);
}

function numParam(params, name, dflt) {
  const v = params.get(name);
  if (v == null || v === "") return dflt;
  const n = Number(v);
  return Number.isFinite(n) ? n : dflt;
}

/**
 * Start the fault server.
 * @returns {Promise<{url:string, port:number, close():Promise<void>, requests(key?:string):number,
 *   aborted(key?:string):number, concurrent(prefix?:string):number, peakConcurrent(prefix?:string):number,
 *   outage(run:string, ms:number):{start:number,end:number}, now():number, log:Array<object>,
 *   reset():void, server:http.Server}>}
 *
 * requests(key)/aborted(key): `key` is either a full tile key (`run/z/x/y`) or a prefix
 * (e.g. a run name): counts of every key equal to it or starting with `${key}/`.
 * Without a key: totals. Only tile requests are counted (not OPTIONS, /count, /health).
 */
/**
 * One request against a token bucket `{tokens, last, rate, burst}` (rate per second, `last` in
 * performance.now() ms): refills it up to `now`, then takes a token if there is one.
 */
export function takeBucketToken(bucket, now) {
  bucket.tokens = Math.min(bucket.burst, bucket.tokens + ((now - bucket.last) / 1000) * bucket.rate);
  bucket.last = now;
  if (bucket.tokens >= 1) {
    bucket.tokens -= 1;
    return true;
  }
  return false;
}

/**
 * One request against a fixed window `{start, quota, windowMs, window, used}` (`start` and `now`
 * in performance.now() ms): moves to the window `now` falls in, then counts the request if the
 * window's quota has room. Returns whether it did, and the ms until the window ends.
 */
export function takeWindowRequest(win, now) {
  // From the time since the start, not `start + end - now`: that sum rounds, and a window's
  // first request would then state one second more than the window has.
  const elapsed = now - win.start;
  const index = Math.floor(elapsed / win.windowMs);
  if (index !== win.window) {
    win.window = index;
    win.used = 0;
  }
  const endsInMs = (index + 1) * win.windowMs - elapsed;
  if (win.used < win.quota) {
    win.used += 1;
    return { ok: true, endsInMs };
  }
  return { ok: false, endsInMs };
}

/** The RateLimit-Policy and RateLimit fields a fixed window states, `endsInMs` before its end. */
export function windowStatement(win, endsInMs) {
  return {
    "RateLimit-Policy": `"tiles";q=${win.quota};w=${win.windowMs / 1000}`,
    RateLimit: `"tiles";r=${win.quota - win.used};t=${Math.ceil(endsInMs / 1000)}`,
  };
}

/** The RateLimit-Policy and RateLimit fields a token bucket `{tokens, rate, burst}` states. */
export function bucketStatement(bucket) {
  const { tokens, rate, burst } = bucket;
  const window = Math.max(1, Math.round(burst / rate));
  const next = tokens >= burst ? 0 : Math.ceil((1 - (tokens % 1)) / rate);
  return {
    "RateLimit-Policy": `"tiles";q=${Math.round(rate * window)};w=${window}`,
    RateLimit: `"tiles";r=${Math.floor(tokens)};t=${next}`,
  };
}

export async function startFaultServer({ seed = 1, host = "127.0.0.1", port = 0, verbose = false, tls = null } = {}) {
  if (host !== "127.0.0.1" && host !== "localhost" && host !== "::1") {
    throw new Error(`fault server binds loopback only (got host ${host})`);
  }
  const attempts = new Map(); // key -> n so far (1-based counter of arrivals)
  const abortedCount = new Map(); // key -> aborted count
  const log = [];
  const sockets = new Set();
  const timers = new Set();
  const inflight = new Set(); // tile responses whose 'close' has not fired yet
  const openNow = new Map(); // `/`-aligned key prefix -> tile requests open now
  const openPeak = new Map(); // `/`-aligned key prefix -> most ever open at once
  let openTotal = 0;
  let peakTotal = 0;
  let generation = 0; // bumped by reset(): requests opened before it are not counted down
  const outages = []; // {run, end} in server ms
  const buckets = new Map(); // run -> {tokens, last, rate, burst}
  let closing = false;
  const t0 = performance.now();

  const sumOver = (map, key) => {
    let total = 0;
    for (const [k, v] of map) {
      if (key === undefined || k === key || k.startsWith(`${key}/`)) total += v;
    }
    return total;
  };

  const now = () => performance.now() - t0;

  /** Every `/`-aligned prefix of a key: "r/1/2/3" -> ["r", "r/1", "r/1/2", "r/1/2/3"]. */
  const prefixesOf = (key) => {
    const segs = key.split("/");
    return segs.map((_, i) => segs.slice(0, i + 1).join("/"));
  };

  const inOutage = (key, t) => {
    for (let i = outages.length - 1; i >= 0; i--) {
      const o = outages[i];
      if (o.end <= t) {
        outages.splice(i, 1);
        continue;
      }
      if (key === o.run || key.startsWith(`${o.run}/`)) return o;
    }
    return null;
  };

  const takeToken = (run, params) => {
    const t = performance.now();
    let b = buckets.get(run);
    if (!b) {
      const rate = Math.max(0, numParam(params, "rate", 10));
      const burst = Math.max(0, numParam(params, "burst", rate));
      b = { tokens: burst, last: t, rate, burst };
      buckets.set(run, b);
    }
    return takeBucketToken(b, t);
  };

  const windows = new Map(); // run -> {start, quota, windowMs, window, used}
  const takeWindow = (run, params) => {
    const t = performance.now();
    let w = windows.get(run);
    if (!w) {
      const quota = Math.max(0, numParam(params, "q", 60));
      const windowMs = Math.max(1, numParam(params, "w", 2)) * 1000;
      w = { start: t, quota, windowMs, window: 0, used: 0 };
      windows.set(run, w);
    }
    return { win: w, ...takeWindowRequest(w, t) };
  };

  const later = (ms, fn) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
    return t;
  };

  function handleTile(req, res, m, url) {
    const params = url.searchParams;
    const z = Number(m[1]);
    const x = Number(m[2]);
    const y = Number(m[3]);
    const run = params.get("run") ?? "";
    const key = `${run}/${z}/${x}/${y}`;
    const n = (attempts.get(key) ?? 0) + 1;
    attempts.set(key, n);

    const fname = params.get("f") ?? "";
    const p = numParam(params, "p", 1);
    const limit = numParam(params, "n", Infinity);
    const tArrive = now();
    const applies = fname !== "" && fname !== "none" && n <= limit && prng(seed, key, n, "fault") < p;
    let fault = applies ? fname : "none";
    const outage = inOutage(key, tArrive);
    // cookie=NAME: a tile server behind a login: 403 unless the request carries the cookie NAME.
    const cookie = params.get("cookie");
    if (cookie && !hasCookie(req, cookie)) fault = "no-cookie";
    else if (outage) fault = "outage";
    else if (fault === "bucket") fault = takeToken(run, params) ? "bucket" : "bucket-429";
    let windowTaken = null;
    if (fault === "window") {
      windowTaken = takeWindow(run, params);
      if (!windowTaken.ok) fault = "window-429";
    }
    // What the bucket or window states when the request arrives (stated=1): the answer may come later.
    const stated = params.get("stated") === "1";
    const statedQuota = !stated
      ? {}
      : fault.startsWith("bucket")
        ? bucketStatement(buckets.get(run))
        : windowTaken
          ? windowStatement(windowTaken.win, windowTaken.endsInMs)
          : {};
    let delay = Math.max(0, numParam(params, "delay", 0));
    // delayjitter=MS: a uniform extra delay in [0, MS), seeded per key and attempt.
    const jitter = numParam(params, "delayjitter", 0);
    if (jitter > 0) delay += jitter * prng(seed, key, n, "jitter");
    const slowp = numParam(params, "slowp", 0);
    if (slowp > 0 && prng(seed, key, n, "slow") < slowp) delay += Math.max(0, numParam(params, "slowms", 0));
    const tailms = numParam(params, "tailms", 0);
    if (tailms > 0) {
      const alpha = numParam(params, "alpha", 1);
      const cap = Math.max(0, numParam(params, "tailmaxms", 60000));
      delay += paretoDelay(prng(seed, key, n, "tail"), tailms, alpha > 0 ? alpha : 1, cap);
    }

    const entry = {
      key,
      path: url.pathname + url.search,
      fault,
      outcome: "pending", // -> sent | aborted | hanging | reset | truncated | shortlen | server-closed | bad-fault
      t: tArrive, // ms since the server started (monotonic)
      n,
      method: req.method,
      headers: { ...req.headers },
      status: null, // the status sent; null for hang/reset/shortlen and while not answered
      tDone: null, // server ms when the response finished or closed
      delayMs: delay,
    };
    log.push(entry);

    // Concurrency: open from now until the first of the response's end, 'finish' and 'close'.
    const prefixes = prefixesOf(key);
    const gen = generation;
    let open = true;
    openTotal++;
    if (openTotal > peakTotal) peakTotal = openTotal;
    for (const pre of prefixes) {
      const c = (openNow.get(pre) ?? 0) + 1;
      openNow.set(pre, c);
      if (c > (openPeak.get(pre) ?? 0)) openPeak.set(pre, c);
    }
    const done = () => {
      if (!open) return;
      open = false;
      entry.tDone = now();
      if (gen !== generation) return;
      openTotal--;
      for (const pre of prefixes) {
        const c = (openNow.get(pre) ?? 1) - 1;
        if (c > 0) openNow.set(pre, c);
        else openNow.delete(pre);
      }
    };

    // Done when the handler ends the response, too: 'finish' may come after the client has read
    // it and sent its next request (both in one turn of the event loop), which would count
    // one request too many as open at once.
    const end = res.end;
    res.end = function (...args) {
      const ended = end.apply(this, args);
      done();
      return ended;
    };

    const state = { serverEnded: false, timer: null };
    inflight.add(res);
    res.on("close", () => {
      done();
      inflight.delete(res);
      if (state.timer) {
        clearTimeout(state.timer);
        timers.delete(state.timer);
        state.timer = null;
      }
      if (res.writableFinished) {
        if (entry.outcome === "pending") entry.outcome = "sent";
        return;
      }
      if (state.serverEnded) return; // reset/shortlen: the server cut it, outcome already set
      if (closing) {
        entry.outcome = "server-closed";
        return;
      }
      entry.outcome = "aborted";
      entry.tAborted = performance.now() - t0;
      abortedCount.set(key, (abortedCount.get(key) ?? 0) + 1);
    });
    res.on("finish", () => {
      done();
      if (entry.outcome === "pending") entry.outcome = "sent";
    });

    // cors=0: no Access-Control-* headers at all, as MapServer's CGI and GeoServer ship.
    const withCors = params.get("cors") !== "0";
    // cc=VALUE: the answer's Cache-Control in place of no-store; cc=none: no Cache-Control at all
    // (most tile servers send none, and a page's <img> then reuses a tile it has shown).
    const cacheControl = params.get("cc");
    const hdr = (extra) => {
      const headers = baseHeaders({ "X-Fault": fault, "X-Fault-Attempt": String(n), ...extra });
      if (!withCors) for (const name of Object.keys(headers)) if (name.startsWith("Access-Control-")) delete headers[name];
      if (cacheControl === "none") delete headers["Cache-Control"];
      else if (cacheControl !== null) headers["Cache-Control"] = cacheControl;
      return headers;
    };

    const respond = () => {
      state.timer = null;
      if (res.destroyed || res.writableEnded) return;
      if (verbose) process.stderr.write(`[fault-server] ${req.method} ${entry.path} n=${n} fault=${fault}\n`);
      const png = () => tilePng(z, x, y);
      const sendBody = (status, type, body, extra = {}) => {
        const buf = Buffer.isBuffer(body) ? body : Buffer.from(body, "utf8");
        res.writeHead(status, hdr({ "Content-Type": type, "Content-Length": String(buf.length), ...extra }));
        entry.status = status;
        entry.bytesSent = buf.length;
        res.end(buf);
      };

      if (fault === "none" || fault === "bucket" || fault === "window") {
        // `age=S`: a cache has held this answer S seconds, except for cache-busted requests (`_tf`).
        const age = params.get("age") !== null && params.get("_tf") === null ? { Age: params.get("age") } : {};
        return sendBody(200, "image/png", png(), { ...age, ...statedQuota });
      }
      if (fault === "outage") {
        const ra = outage.retryAfter != null ? { "Retry-After": String(outage.retryAfter) } : {};
        return sendBody(outage.status, "text/plain; charset=utf-8", "outage", ra);
      }
      if (fault === "no-cookie") return sendBody(403, "text/plain; charset=utf-8", "403 Forbidden: log in first\n");
      if (fault === "window-429") {
        const wait = String(Math.max(1, Math.ceil(windowTaken.endsInMs / 1000)));
        return sendBody(429, "text/plain; charset=utf-8", "429 Too Many Requests\n", { "Retry-After": wait, ...statedQuota });
      }
      if (fault === "bucket-429") {
        const ra = retryAfterValue(params.get("ra"));
        return sendBody(429, "text/plain; charset=utf-8", "429 Too Many Requests\n", {
          ...(ra != null ? { "Retry-After": ra } : {}),
          ...statedQuota,
        });
      }
      if (RETRYABLE_FAULTS.has(fault) || PLAIN_FAULTS.has(fault)) {
        const status = Number(fault);
        const extra = {};
        const ra = retryAfterValue(params.get("ra"));
        if (ra != null && RETRYABLE_FAULTS.has(fault)) extra["Retry-After"] = ra;
        return sendBody(status, "text/plain; charset=utf-8", `${status} ${STATUS_TEXT[status]}\n`, extra);
      }
      switch (fault) {
        case "204":
          res.writeHead(204, hdr({}));
          entry.status = 204;
          return res.end();
        case "hang":
          entry.outcome = "hanging";
          return; // never answer; res 'close' records the client's abort or close()
        case "reset": {
          const body = png();
          const half = body.subarray(0, Math.floor(body.length / 2));
          res.writeHead(200, hdr({ "Content-Type": "image/png", "Content-Length": String(body.length) }));
          state.serverEnded = true;
          entry.outcome = "reset";
          res.write(half, () => setImmediate(() => res.socket?.destroy()));
          return;
        }
        case "truncate": {
          const body = png();
          res.writeHead(200, hdr({ "Content-Type": "image/png" })); // no Content-Length -> chunked
          entry.outcome = "truncated";
          entry.status = 200;
          res.end(body.subarray(0, Math.floor(body.length / 2)));
          return;
        }
        case "shortlen": {
          const body = png();
          res.writeHead(200, hdr({ "Content-Type": "image/png", "Content-Length": String(body.length + 1024) }));
          state.serverEnded = true;
          entry.outcome = "shortlen";
          res.write(body, () => res.socket?.end());
          return;
        }
        case "sexml":
          return sendBody(200, "application/vnd.ogc.se_xml", serviceExceptionXml(params.get("code") || "NoApplicableCode"));
        case "owsxml":
          return sendBody(200, "text/xml", owsExceptionXml(params.get("code") || "NoApplicableCode"));
        case "html":
          return sendBody(200, "text/html; charset=utf-8", HTML_502);
        case "json":
          return sendBody(200, "application/json", `{"error":"quota"}`);
        case "gzip":
          return sendBody(200, "image/png", tileGzip(z, x, y), { "Content-Encoding": "gzip" });
        case "gzipbomb":
          return sendBody(200, "image/png", gzipBomb(numParam(params, "size", 64 * 1024 * 1024)), { "Content-Encoding": "gzip" });
        case "huge":
        case "hugelen": {
          const size = numParam(params, "size", 600 * 1024 * 1024);
          const length = fault === "hugelen" ? { "Content-Length": String(size) } : {};
          res.writeHead(200, hdr({ "Content-Type": "image/png", ...length }));
          entry.status = 200;
          entry.bytesSent = 0;
          // Written as fast as the client reads (backpressure): a client that stops reading
          // stops the server, and one that aborts ends it.
          const more = () => {
            while (entry.bytesSent < size && !res.destroyed) {
              const head = entry.bytesSent === 0 ? PNG_SIGNATURE : HUGE_CHUNK;
              const part = head.subarray(0, Math.min(head.length, size - entry.bytesSent));
              entry.bytesSent += part.length;
              if (!res.write(part)) return res.once("drain", more);
            }
            if (!res.destroyed) res.end();
          };
          return more();
        }
        default:
          entry.outcome = "bad-fault";
          return sendBody(400, "text/plain; charset=utf-8", `unknown fault ${JSON.stringify(fault)}; known: ${FAULTS.join(", ")}\n`);
      }
    };

    if (delay > 0) state.timer = later(delay, respond);
    else respond();
  }

  // `tls` ({key, cert}): HTTPS with HTTP/2 (and HTTP/1.1 for clients without it), as a tile CDN
  // serves; over HTTP/2, the faults that cut a connection reset their own stream.
  const listener = (req, res) => {
    // Drain any request body so keep-alive works.
    req.resume();
    let url;
    try {
      url = new URL(req.url, "http://fault.invalid");
    } catch {
      res.writeHead(400, baseHeaders({ "Content-Type": "text/plain" }));
      return res.end("bad url\n");
    }
    if (req.method === "OPTIONS") {
      res.writeHead(204, baseHeaders({}));
      return res.end();
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, baseHeaders({ "Content-Type": "text/plain", Allow: "GET, HEAD, OPTIONS" }));
      return res.end("method not allowed\n");
    }
    if (url.pathname === "/health") {
      res.writeHead(200, baseHeaders({ "Content-Type": "text/plain", "Content-Length": "2" }));
      return res.end("ok");
    }
    if (url.pathname === "/count") {
      const run = url.searchParams.get("run");
      const body = JSON.stringify({
        requests: sumOver(attempts, run ?? undefined),
        aborted: sumOver(abortedCount, run ?? undefined),
        concurrent: run == null ? openTotal : (openNow.get(run) ?? 0),
        peakConcurrent: run == null ? peakTotal : (openPeak.get(run) ?? 0),
      });
      res.writeHead(200, baseHeaders({ "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(body)) }));
      return res.end(body);
    }
    const m = TILE_RE.exec(url.pathname);
    if (m) return handleTile(req, res, m, url);
    res.writeHead(404, baseHeaders({ "Content-Type": "text/plain" }));
    res.end("no such route\n");
  };
  const server = tls ? http2.createSecureServer({ key: tls.key, cert: tls.cert, allowHTTP1: true }, listener) : http.createServer(listener);
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  server.on("clientError", (_err, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n");
    else socket.destroy();
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address();
  const hostPart = addr.family === "IPv6" || addr.family === 6 ? `[${addr.address}]` : addr.address;
  const url = `${tls ? "https" : "http"}://${hostPart}:${addr.port}`;

  let closed = null;
  return {
    url,
    port: addr.port,
    server,
    log,
    seed,
    requests: (key) => sumOver(attempts, key),
    aborted: (key) => sumOver(abortedCount, key),
    /** Tile requests open now (arrived, response not finished or closed) under a key prefix. */
    concurrent: (prefix) => (prefix === undefined ? openTotal : (openNow.get(prefix) ?? 0)),
    /** The most tile requests ever open at once under a key prefix (since start or reset()). */
    peakConcurrent: (prefix) => (prefix === undefined ? peakTotal : (openPeak.get(prefix) ?? 0)),
    /** Server ms since start (the clock of log `t`). */
    now,
    /**
     * From now for `ms`: every tile request of `run` arriving gets `status` (503) "outage", with
     * `Retry-After: retryAfter` when given (a rate limiter refusing everything for a while: 429).
     */
    outage(run, ms, { status = 503, retryAfter = null } = {}) {
      if (typeof run !== "string") throw new TypeError("outage(run, ms): run must be a string");
      if (!(Number.isFinite(ms) && ms >= 0)) throw new TypeError("outage(run, ms): ms must be a finite number >= 0");
      if (!(Number.isInteger(status) && status >= 400 && status <= 599)) throw new TypeError("outage(run, ms, {status}): status must be 400–599");
      const start = now();
      const end = start + ms;
      outages.push({ run, end, status, retryAfter });
      return { start, end };
    },
    reset() {
      attempts.clear();
      abortedCount.clear();
      log.length = 0;
      generation++;
      openNow.clear();
      openPeak.clear();
      openTotal = 0;
      peakTotal = 0;
      outages.length = 0;
      buckets.clear();
      windows.clear();
    },
    close() {
      if (closed) return closed;
      closing = true;
      for (const t of timers) clearTimeout(t);
      timers.clear();
      const responsesClosed = [...inflight].map((r) => new Promise((resolve) => r.once("close", resolve)));
      closed = new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
        for (const s of sockets) s.destroy();
      })
        .then(() => Promise.all(responsesClosed))
        .then(() => undefined);
      return closed;
    },
  };
}

// ---------------------------------------------------------------- CLI

function parseArgs(argv) {
  const out = { port: 0, seed: 1, host: "127.0.0.1", verbose: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [name, inline] = a.includes("=") ? a.split(/=(.*)/s) : [a, undefined];
    const val = () => (inline !== undefined ? inline : argv[++i]);
    if (name === "--port") out.port = Number(val());
    else if (name === "--seed") out.seed = Number(val());
    else if (name === "--host") out.host = val();
    else if (name === "--verbose" || name === "-v") out.verbose = true;
    else if (name === "--help" || name === "-h") {
      process.stdout.write("usage: fault-server.mjs [--port N] [--seed N] [--host 127.0.0.1] [--verbose]\n");
      process.exit(0);
    } else {
      process.stderr.write(`fault-server: unknown argument ${a}\n`);
      process.exit(2);
    }
  }
  return out;
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href;
if (isMain) {
  const args = parseArgs(process.argv.slice(2));
  const srv = await startFaultServer(args);
  process.stdout.write(`FAULT_SERVER_URL=${srv.url}\n`);
  let stopping = false;
  const stop = async (why) => {
    if (stopping) return;
    stopping = true;
    if (args.verbose) process.stderr.write(`[fault-server] stopping (${why})\n`);
    await srv.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  let watchStdin = false;
  try {
    const st = fs.fstatSync(0);
    watchStdin = st.isFIFO() || st.isSocket();
  } catch {
    watchStdin = false;
  }
  if (watchStdin) {
    process.stdin.on("end", () => stop("stdin end"));
    process.stdin.on("error", () => stop("stdin error"));
    process.stdin.resume();
  }
}
