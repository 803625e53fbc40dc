// A short soak (the bench runs the long one, 100 000 calls, with the same body: bench/soak.mjs):
// many calls with successes, retries, permanent failures, deadline give-ups and aborts must leave
// the wasm module's linear memory where warm-up left it, the JS heap about where it was, no timer
// pending, and every tile and error collectable. The platform fetch is replaced by an in-process
// fake so the soak measures tilefetch, not sockets.
import { test } from "node:test";
import assert from "node:assert/strict";
import { runSoak, soakVerdicts } from "../../bench/soak.mjs";

test("20 000 calls after warm-up: wasm memory does not grow, the JS heap stays put, nothing leaks", async (t) => {
  const r = await runSoak({ calls: 20_000 });
  t.diagnostic(`outcomes ${JSON.stringify(r.outcomes)}; fetches ${r.fetches}; ${(r.ms / 1000).toFixed(1)} s`);
  t.diagnostic(
    `wasm memory ${r.before.wasmMemoryBytes} -> ${r.after.wasmMemoryBytes} bytes; JS heap ` +
      `${(r.before.heapUsed / 1e6).toFixed(1)} -> ${(r.after.heapUsed / 1e6).toFixed(1)} MB; timers ${r.timersAtStart} -> ` +
      `${r.after.timers}; results collected ${r.results.collected}/${r.results.registered}`,
  );
  for (const [what, ok] of soakVerdicts(r)) assert.ok(ok, `${what}: ${JSON.stringify(r)}`);
});
