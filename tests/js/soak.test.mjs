// A short soak (the bench runs the long one): many calls with successes, retries, permanent
// failures and aborts must leave the wasm module's linear memory where warm-up left it, and the
// JS heap about where it was. The platform fetch is replaced by an in-process fake so the soak
// measures tilefetch, not sockets.
import { test } from "node:test";
import v8 from "node:v8";
import vm from "node:vm";
import assert from "node:assert/strict";
import { fetchTile, stats } from "../../pkg/node.js";
import { wasmMemoryBytes } from "../../pkg/gen/tilefetch.js";

// A real gc() between the two heap readings, without a command-line flag.
v8.setFlagsFromString("--expose-gc");
const gc = vm.runInNewContext("gc");

const body = new Uint8Array(1000).fill(7);
let sent = 0;
globalThis.fetch = async () => {
  sent++;
  switch (sent % 10) {
    case 3:
      return new Response("busy", { status: 503 });
    case 5:
      return new Response(body, { status: 404 });
    default:
      return new Response(body, { headers: { "content-type": "image/png" } });
  }
};

async function batch(size) {
  const shared = new AbortController();
  const calls = [];
  for (let i = 0; i < size; i++) {
    const signal = i % 50 === 7 ? AbortSignal.abort() : shared.signal;
    const url = `http://h${i % 7}.soak.test/t/${i}.png`;
    calls.push(fetchTile(url, { baseDelayMs: 0, maxDelayMs: 1, signal }).then(() => "tile", (e) => e.kind));
  }
  return Promise.all(calls);
}

test("20 000 calls after warm-up: wasm memory does not grow, the JS heap stays put", async (t) => {
  for (let i = 0; i < 3; i++) await batch(1000);
  gc();
  const memory = wasmMemoryBytes();
  const heap = process.memoryUsage().heapUsed;
  const kinds = {};
  for (let i = 0; i < 20; i++) for (const k of await batch(1000)) kinds[k] = (kinds[k] ?? 0) + 1;
  gc();
  const heapAfter = process.memoryUsage().heapUsed;
  t.diagnostic(`outcomes ${JSON.stringify(kinds)}; fetches ${sent}`);
  t.diagnostic(`wasm memory ${memory} -> ${wasmMemoryBytes()} bytes; JS heap ${(heap / 1e6).toFixed(1)} -> ${(heapAfter / 1e6).toFixed(1)} MB`);
  assert.ok(kinds.tile > 15000 && kinds.http > 1000 && kinds.aborted > 300, JSON.stringify(kinds));
  assert.equal(wasmMemoryBytes(), memory, "wasm linear memory grew");
  assert.ok(heapAfter - heap < 8e6, `JS heap grew by ${((heapAfter - heap) / 1e6).toFixed(1)} MB`);
  for (const h of Object.values(stats())) assert.equal(h.inFlight + h.queued, 0, "nothing left in flight");
});
