#!/usr/bin/env node
// The soak: many fetchTile calls in one process — successes, retries, permanent failures,
// deadline give-ups, calls aborted before and during their request — against an in-process fake
// fetch (so it measures tilefetch, not sockets). After warm-up, the wasm module's linear memory
// must not grow, the JS heap must stay put, no timer may be left pending, and every tile and
// error handed out must be collectable (FinalizationRegistry).
//
//   node bench/soak.mjs [--calls 100000]      writes bench/out/soak.json (the bench)
//   tests/js/soak.test.mjs                    runs the same body with 20 000 calls (the tests)
import v8 from "node:v8";
import vm from "node:vm";
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const BATCH = 1000;
const WARM_UP_BATCHES = 3;

// A real gc() between heap readings, without a command-line flag.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");

const pendingTimers = () => process.getActiveResourcesInfo().filter((r) => r === "Timeout").length;
const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Collects garbage until FinalizationRegistry callbacks have had their turn. */
async function collect() {
  for (let i = 0; i < 4; i++) {
    gc();
    await turn();
  }
}

/**
 * The fake platform fetch: every 10th request is a 503 (retried), every 10th a 404 (given up
 * at once), `/busy/` is always a 503 (given up at its deadline), `/hang/` never answers until
 * its signal aborts; everything else is a tile. It honours the signal like the real one.
 */
function fakeFetch() {
  const body = new Uint8Array(1000).fill(7);
  let sent = 0;
  const fetch = async (input, init = {}) => {
    sent++;
    const url = String(input instanceof Request ? input.url : input);
    const signal = init.signal ?? (input instanceof Request ? input.signal : undefined);
    if (signal?.aborted) throw signal.reason;
    if (url.includes("/hang/")) {
      return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason), { once: true }));
    }
    if (url.includes("/busy/")) return new Response("busy", { status: 503 });
    switch (sent % 10) {
      case 3:
        return new Response("busy", { status: 503 });
      case 5:
        return new Response(body, { status: 404 });
      default:
        return new Response(body, { headers: { "content-type": "image/png" } });
    }
  };
  return { fetch, sent: () => sent };
}

/**
 * Runs `calls` fetchTile calls (after 3 000 of warm-up) in batches of 1 000 and returns what the
 * memory, timers and collected results did. Replaces globalThis.fetch for its duration.
 */
export async function runSoak({ calls = 100_000 } = {}) {
  const { fetchTile, stats } = await import("../pkg/node.js");
  // The module's own exports (initSync hands back the instance node.js made), for its memory.
  const { initSync } = await import("../pkg/gen/tilefetch.js");
  const memory = Object.values(initSync()).find((value) => value instanceof WebAssembly.Memory);
  const wasmMemoryBytes = () => memory.buffer.byteLength;
  const platformFetch = globalThis.fetch;
  const fake = fakeFetch();
  globalThis.fetch = fake.fetch;
  let registered = 0;
  let collected = 0;
  const registry = new FinalizationRegistry(() => {
    collected++;
  });
  const track = (value) => {
    registry.register(value, undefined);
    registered++;
  };

  const batch = async (size, round) => {
    const shared = new AbortController();
    const calls = [];
    for (let i = 0; i < size; i++) {
      const host = `h${i % 7}.soak.test`;
      let call;
      if (i % 50 === 7) {
        call = fetchTile(`http://${host}/t/${round}/${i}.png`, { signal: AbortSignal.abort() });
      } else if (i % 50 === 13) {
        const controller = new AbortController();
        setTimeout(() => controller.abort(), 1);
        call = fetchTile(`http://${host}/hang/${round}/${i}.png`, { signal: controller.signal });
      } else if (i % 50 === 21) {
        call = fetchTile(`http://${host}/busy/${round}/${i}.png`, { baseDelayMs: 1, maxDelayMs: 2, deadlineMs: 15, signal: shared.signal });
      } else {
        call = fetchTile(`http://${host}/t/${round}/${i}.png`, { baseDelayMs: 0, maxDelayMs: 1, signal: shared.signal });
      }
      calls.push(
        call.then(
          (tile) => {
            track(tile);
            return "tile";
          },
          (error) => {
            track(error);
            return error.kind;
          },
        ),
      );
    }
    return Promise.all(calls);
  };

  try {
    const timersBefore = pendingTimers();
    for (let i = 0; i < WARM_UP_BATCHES; i++) await batch(BATCH, `w${i}`);
    await collect();
    const before = { wasmMemoryBytes: wasmMemoryBytes(), heapUsed: process.memoryUsage().heapUsed, timers: pendingTimers() };
    const registeredBefore = registered;
    const collectedBefore = collected;
    const sentBefore = fake.sent();
    const outcomes = {};
    const t0 = performance.now();
    for (let round = 0; round * BATCH < calls; round++) {
      for (const kind of await batch(Math.min(BATCH, calls - round * BATCH), round)) outcomes[kind] = (outcomes[kind] ?? 0) + 1;
    }
    const ms = performance.now() - t0;
    await collect();
    const after = { wasmMemoryBytes: wasmMemoryBytes(), heapUsed: process.memoryUsage().heapUsed, timers: pendingTimers() };
    let inFlight = 0;
    for (const h of Object.values(stats())) inFlight += h.inFlight + h.queued;
    return {
      calls,
      ms,
      fetches: fake.sent() - sentBefore,
      outcomes,
      timersAtStart: timersBefore,
      before,
      after,
      // Tiles and errors handed out during the measured calls, and how many were garbage-collected.
      results: { registered: registered - registeredBefore, collected: collected - collectedBefore },
      inFlight,
    };
  } finally {
    globalThis.fetch = platformFetch;
  }
}

/** The soak's pass/fail checks, shared by the test and the report. */
export function soakVerdicts(r) {
  return [
    ["wasm linear memory after warm-up does not grow", r.after.wasmMemoryBytes === r.before.wasmMemoryBytes],
    ["JS heap grows by less than 8 MB", r.after.heapUsed - r.before.heapUsed < 8e6],
    ["no timer left pending", r.after.timers <= r.timersAtStart],
    ["every tile and error handed out is garbage-collected", r.results.collected === r.results.registered],
    ["nothing in flight or queued", r.inFlight === 0],
    [
      "the mix happened (tiles, http, aborted, deadline)",
      r.outcomes.tile > 0.7 * r.calls && r.outcomes.http > 0.05 * r.calls && r.outcomes.aborted > 0.03 * r.calls && r.outcomes.deadline > 0.01 * r.calls,
    ],
  ];
}

const isMain = process.argv[1] && import.meta.url === pathToFileURL(fs.realpathSync(process.argv[1])).href;
if (isMain) {
  const i = process.argv.indexOf("--calls");
  const calls = i >= 0 ? Number(process.argv[i + 1]) : 100_000;
  const result = await runSoak({ calls });
  const here = path.dirname(fileURLToPath(import.meta.url));
  fs.mkdirSync(path.join(here, "out"), { recursive: true });
  fs.writeFileSync(path.join(here, "out/soak.json"), JSON.stringify(result, null, 1));
  process.stderr.write(`soak: ${JSON.stringify(result)}\n`);
  for (const [what, ok] of soakVerdicts(result)) process.stderr.write(`  ${ok ? "ok  " : "FAIL"} ${what}\n`);
}
