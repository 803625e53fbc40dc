#!/usr/bin/env node
// Where a tile's time goes in the map view, own loader against adapter: the map-view benchmark's
// healthy script (bench/mapview.mjs) on the fast fault server (0–5 ms), and per tile, from the
// page's Resource Timing and the harness's records: **issue**, from the library asking for the
// tile (tileloadstart) to its request starting; **net**, the request, start to response end;
// **after**, from the response end to the library's "loaded". Tiles of the open step apart from
// the later steps' (the open step pays the module's start and, in the OpenLayers and Leaflet
// adapters, the first contact with an origin: docs/map-libraries.md); the adapter's **after** also
// split at its fetch's headers, its body read and its decode (SPLIT), and its **issue** split where
// its request was made (ISSUE_SPLIT: `fetch()` called, or an image's `src` set). Writes
// bench/out/mapview-phases.json. OpenLayers and Leaflet: MapLibre's own loader fetches its tiles in
// its worker, whose requests the page's Resource Timing does not list.
//
//   node bench/mapview-phases.mjs [--libs ol,leaflet] [--rounds 8] [--server fast|public] [--protocol h1|h2]
// (`--server public --protocol h2`: the 30–80 ms server over HTTP/2 + TLS, as "Map view over
// HTTP/2" in RESULTS.md; written to bench/out/mapview-phases-public-h2.json.)
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { setUp } from "../tests/browser/adapters-common.mjs";
import { loopbackCertificate } from "../tests/server/loopback-cert.mjs";
import { option } from "./cli.mjs";
import { LIBS, MAP_SCENARIOS, SERVERS, runOne, useServer } from "./mapview.mjs";
import { median } from "./stats.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PHASES = ["issue", "net", "after"];
/**
 * The adapter's **after**, split at what the page saw of each tile: the response's end (Resource
 * Timing) → `fetch()` resolved (headers) → the body read (its last read) → the decoder started
 * (after the core's classification and the hand-off) → decoded → the library's "loaded".
 */
const SPLIT = [
  ["end", "headers"],
  ["headers", "body"],
  ["body", "decoder"],
  ["decoder", "decoded"],
  ["decoded", "loaded"],
];
/**
 * The adapter's **issue**, split where the page made the request: the library asking for the tile
 * → `fetch()` called or an image's `src` set (tilefetch's own part: the adapter, the core, the
 * queue) → the request's start (Resource Timing: the browser's part, as for the own loader).
 */
const ISSUE_SPLIT = [
  ["asked", "sent"],
  ["sent", "start"],
];

/** Each of `pairs`' spans over the tiles' `rows` (their `field`): how many had it, p50 and p90. */
function partsOf(rows, field, pairs) {
  return Object.fromEntries(
    pairs.map(([from, to]) => {
      const xs = rows.map((r) => r[field][`${from}-${to}`]).filter(Number.isFinite);
      return [`${from}-${to}`, { tiles: xs.length, p50: median(xs), p90: quantile(xs, 0.9) }];
    }),
  );
}

/**
 * In the page, before a watched round's run (either loader's): records when each tile's request
 * was made (`fetch()` called, or an image's `src` set), its `fetch()` resolved, its body was read
 * and its ImageDecoder started and finished, by the tile's key (from its URL; a decoder's from
 * the `tile=z/x/y` text chunk the fault server writes into every tile).
 */
function watchAdapter() {
  const seen = {};
  window.__tileEvents = seen;
  const mark = (key, what) => {
    if (key) (seen[key] ??= {})[what] ??= performance.now();
  };
  const keyOfUrl = (input) => String(input?.url ?? input).match(/\/tile\/(\d+\/\d+\/\d+)\.png/)?.[1];
  const latin1 = new TextDecoder("latin1");
  const keyOfBytes = (data) =>
    latin1.decode(new Uint8Array(data.buffer ?? data, data.byteOffset ?? 0, Math.min(256, data.byteLength))).match(/tile\0?(\d+\/\d+\/\d+)/)?.[1];
  const fetchAsIs = globalThis.fetch;
  globalThis.fetch = function (input, init) {
    const key = keyOfUrl(input);
    mark(key, "sent");
    return fetchAsIs.call(this, input, init).then((response) => {
      mark(key, "headers");
      // The body read ends with `arrayBuffer()` resolving, or with a reader's read that is done
      // (the core's transport reads through the body's reader).
      const read = response.arrayBuffer.bind(response);
      response.arrayBuffer = () =>
        read().then((body) => {
          mark(key, "body");
          return body;
        });
      const body = response.body;
      if (body) {
        const getReader = body.getReader.bind(body);
        body.getReader = (...args) => {
          const reader = getReader(...args);
          const next = reader.read.bind(reader);
          reader.read = () =>
            next().then((chunk) => {
              if (chunk.done) mark(key, "body");
              return chunk;
            });
          return reader;
        };
      }
      return response;
    });
  };
  // A tile the adapter loads as an image (a server not known yet to send CORS headers).
  const src = Object.getOwnPropertyDescriptor(HTMLImageElement.prototype, "src");
  Object.defineProperty(HTMLImageElement.prototype, "src", {
    ...src,
    set(value) {
      mark(keyOfUrl(value), "sent");
      src.set.call(this, value);
    },
  });
  const Decoder = globalThis.ImageDecoder;
  if (typeof Decoder === "function") {
    globalThis.ImageDecoder = class extends Decoder {
      constructor(init) {
        super(init);
        const key = keyOfBytes(init.data);
        mark(key, "decoder");
        const decode = this.decode.bind(this);
        this.decode = (...args) =>
          decode(...args).then((result) => {
            mark(key, "decoded");
            return result;
          });
      }
    };
  }
}

/** In the page, after a run: each loaded tile's phases, and whether it was asked for by the open step. */
function tilePhases([SPLIT, ISSUE_SPLIT]) {
  const records = window.harness.states();
  const entries = performance.getEntriesByType("resource").filter((e) => e.name.includes("/tile/"));
  const first = Math.min(...Object.values(records).map((r) => r.t0 ?? Number.POSITIVE_INFINITY));
  const out = [];
  for (const [key, r] of Object.entries(records)) {
    const e = entries.filter((x) => x.name.includes(`/tile/${key}.png`)).at(-1);
    if (!e || r.t1 === null || r.state !== "loaded") continue;
    // The open step's tiles are asked for within its first frames.
    const row = { open: r.t0 < first + 30, issue: e.startTime - r.t0, net: e.responseEnd - e.startTime, after: r.t1 - e.responseEnd };
    const seen = window.__tileEvents?.[key];
    if (seen) {
      const at = { ...seen, end: e.responseEnd, loaded: r.t1 };
      const spans = (times, pairs) => Object.fromEntries(pairs.map(([from, to]) => [`${from}-${to}`, times[to] - times[from]]));
      row.split = spans(at, SPLIT);
      row.issueSplit = spans({ ...seen, asked: r.t0, start: e.startTime }, ISSUE_SPLIT);
    }
    out.push(row);
  }
  return out;
}

const quantile = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(q * s.length))] : null;
};

async function main() {
  const libs = option("libs", "ol,leaflet").split(",");
  const rounds = Number(option("rounds", 8));
  const serverId = option("server", "fast");
  const protocol = option("protocol", "h1");
  if (serverId !== "fast" && serverId !== "public") throw new Error("--server: fast or public");
  if (protocol !== "h1" && protocol !== "h2") throw new Error("--protocol: h1 or h2");
  const tls = protocol === "h2" ? loopbackCertificate() : null;
  useServer(SERVERS[serverId]);
  const healthy = MAP_SCENARIOS.find((s) => s.id === "ok");
  const out = { server: serverId, protocol, latency: SERVERS[serverId].latency, rounds, libs: {} };
  for (const lib of LIBS.filter((l) => libs.includes(l.id))) {
    const env = await setUp(lib.entry, { webgl: lib.webgl, tls });
    const tiles = { own: [], tilefetch: [] };
    let loader;
    // The split's wrappers cost the adapter's tiles time of their own: they watch every other
    // round, whose tiles give the split and nothing else.
    let watched = false;
    const open = env.open;
    env.open = async () => {
      const page = await open();
      if (watched) await page.evaluate(watchAdapter);
      const close = page.closeContext;
      page.closeContext = async () => {
        const rows = await page.evaluate(tilePhases, [SPLIT, ISSUE_SPLIT]);
        tiles[loader].push(...rows.map((r) => ({ ...r, watched })));
        await close();
      };
      return page;
    };
    try {
      for (let round = 0; round < rounds; round++) {
        watched = round % 2 === 1;
        for (loader of round % 2 === 0 ? ["own", "tilefetch"] : ["tilefetch", "own"]) await runOne(env, lib, loader, healthy, round);
      }
    } finally {
      await env.close();
    }
    out.libs[lib.id] = {};
    for (const [name, rows] of Object.entries(tiles)) {
      out.libs[lib.id][name] = {};
      for (const step of ["open", "later"]) {
        const of = rows.filter((r) => r.open === (step === "open") && !r.watched);
        out.libs[lib.id][name][step] = {
          tiles: of.length,
          ...Object.fromEntries(
            PHASES.map((p) => [
              p,
              {
                p50: median(of.map((r) => r[p])),
                p90: quantile(
                  of.map((r) => r[p]),
                  0.9,
                ),
              },
            ]),
          ),
        };
        const split = rows.filter((r) => r.open === (step === "open") && r.split);
        if (split.length) {
          out.libs[lib.id][name][step].split = partsOf(split, "split", SPLIT);
          out.libs[lib.id][name][step].issueSplit = partsOf(split, "issueSplit", ISSUE_SPLIT);
        }
        const s = out.libs[lib.id][name][step];
        for (const [phase, parts] of [
          ["issue", s.issueSplit],
          ["after", s.split],
        ]) {
          if (!parts) continue;
          process.stderr.write(
            `  ${lib.id.padEnd(8)} ${name.padEnd(9)} ${step.padEnd(5)} ${phase}, split: ${Object.entries(parts)
              .map(([k, v]) => `${k} ${v.p50?.toFixed(1)}/${v.p90?.toFixed(1)}`)
              .join("  ")}\n`,
          );
        }
        process.stderr.write(
          `  ${lib.id.padEnd(8)} ${name.padEnd(9)} ${step.padEnd(5)} ${String(s.tiles).padStart(3)} tiles; ms p50/p90: ${PHASES.map((p) => `${p} ${s[p].p50?.toFixed(1)}/${s[p].p90?.toFixed(1)}`).join("  ")}\n`,
        );
      }
    }
  }
  fs.mkdirSync(path.join(HERE, "out"), { recursive: true });
  const suffix = serverId === "fast" && protocol === "h1" ? "" : `-${serverId}-${protocol}`;
  fs.writeFileSync(path.join(HERE, `out/mapview-phases${suffix}.json`), JSON.stringify(out, null, 1));
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
