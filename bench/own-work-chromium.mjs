#!/usr/bin/env node
// What a call costs a page's main thread, with the network taken out: in headless Chromium the
// page's `fetch` is replaced, for the tiles' address, by a stub that answers at once with the
// same healthy PNG tile (a fresh, script-made Response each time), and the renderer's main-thread
// busy time (the DevTools protocol's TaskDuration) is read before and after each batch. The plain
// JS wrapper, fetchTile (the default client, recent tiles on: with the default --tiles a batch
// asks for more tiles than they hold) and a TileClient without recent tiles take turns in rounds,
// as in bench/own-work.mjs for Node (each batch bench/overhead-rounds.mjs's). µs per call over
// the wrapper, medians of the differences paired within rounds. Writes
// bench/out/own-work-chromium.json.
//
//   node bench/own-work-chromium.mjs [--tiles 4000] [--rounds 9] [--beside DIR]
//
// --beside DIR: another build of the package (a copy of pkg/ made at another commit) whose
// fetchTile runs in the same rounds as "tilefetch-fetchtile-beside", for a before/after of a
// change in one page; the result goes to bench/out/own-work-chromium-beside.json instead.
import fs from "node:fs";
import path from "node:path";
import { bundle, HERE, OUT, ROOT } from "./bundle.mjs";
import { option } from "./cli.mjs";
import { inTurns, summarise } from "./overhead-rounds.mjs";
import { launchBrowser, startStaticServer } from "../tests/browser/helpers.mjs";
import { tilePng } from "../tests/server/fault-server.mjs";

const tiles = Number(option("tiles", 4000));
const rounds = Number(option("rounds", 9));
const beside = option("beside", null);
const warmup = 2;
const concurrency = 32;

// The other build is served from under bench/out/, which the static server may serve.
const BESIDE_DIR = path.join(OUT, "beside-pkg");
if (beside !== null) {
  fs.rmSync(BESIDE_DIR, { recursive: true, force: true });
  fs.cpSync(path.resolve(beside), BESIDE_DIR, { recursive: true });
}

await bundle(path.join(HERE, "browser/entry.mjs"), path.join(OUT, "browser/bench.js"));
const statics = await startStaticServer(ROOT, { allow: ["/pkg/", "/bench/"] });
const browser = await launchBrowser();
let result;
try {
  const page = await (await browser.newContext()).newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(`${statics.url}/bench/browser/page.html`);
  const ids = await page.evaluate(
    async ({ tiles, png, beside }) => {
      const TILES = "http://127.0.0.1:9/";
      const body = new Uint8Array(png);
      const headers = { "content-type": "image/png", "content-length": String(body.length), date: new Date().toUTCString() };
      // The tiles' address only: the modules' own files still load from the static server.
      const realFetch = globalThis.fetch;
      globalThis.fetch = async (input, init) => {
        if (!String(input?.url ?? input).startsWith(TILES)) return realFetch(input, init);
        init?.signal?.throwIfAborted();
        return new Response(body, { headers });
      };
      const { CLIENTS, batch } = await import("/bench/out/browser/bench.js");
      const tilefetch = await import("/pkg/browser.js");
      const fetchTileOf = (module) => CLIENTS["tilefetch-fetchtile"].create({ tilefetch: module });
      const noRecent = new tilefetch.TileClient({ memoryCacheBytes: 0 });
      const clients = {
        "raw-fetch": CLIENTS["raw-fetch"].create({ tilefetch }),
        "plain-wrapper": CLIENTS["plain-wrapper"].create({ tilefetch }),
        "tilefetch-fetchtile": fetchTileOf(tilefetch),
        "tileclient-no-recent": { get: async (url, signal) => (await noRecent.fetchTile(url, { signal })).data },
      };
      if (beside) clients["tilefetch-fetchtile-beside"] = fetchTileOf(await import("/bench/out/beside-pkg/browser.js"));
      const urls = Array.from({ length: tiles }, (_, i) => `${TILES}tile/15/${16000 + (i % 40)}/${10000 + Math.floor(i / 40)}.png`);
      globalThis.runBatch = (id, concurrency) => batch(clients[id], urls, concurrency);
      return Object.keys(clients);
    },
    { tiles, png: [...tilePng(15, 16000, 10000)], beside: beside !== null },
  );
  // The main thread's busy time (Chrome's TaskDuration, the renderer main thread's tasks), read
  // before and after each batch: what the page's own work cost, whatever its wall time.
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Performance.enable");
  const busyUs = async () => (await cdp.send("Performance.getMetrics")).metrics.find((m) => m.name === "TaskDuration").value * 1e6;
  const samples = await inTurns(ids, { rounds, warmup }, async (id) => {
    const before = await busyUs();
    const { wallMs } = await page.evaluate(({ id, concurrency }) => globalThis.runBatch(id, concurrency), { id, concurrency });
    return { wallMs, cpuUs: (await busyUs()) - before };
  });
  if (errors.length) throw new Error(`page errors: ${errors.join("\n")}`);
  const summary = summarise(samples, { tiles });
  result = { version: browser.version(), tiles, rounds, warmup, concurrency, samples, summary };
} finally {
  await browser.close();
  await statics.close();
}
fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(path.join(OUT, beside === null ? "own-work-chromium.json" : "own-work-chromium-beside.json"), `${JSON.stringify(result, null, 1)}\n`);
for (const [id, s] of Object.entries(result.summary))
  process.stderr.write(
    `own work (Chromium ${result.version}), ${id}: main thread ${s.cpuUsPerCall.toFixed(1)} µs per call, ` +
      `${s.extraCpuOverReferenceUsPerCall.toFixed(1)} over the wrapper (wall ${((s.wallMs * 1000) / tiles).toFixed(1)})\n`,
  );
process.exit(0);
