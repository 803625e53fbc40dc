// The module reads the platform's clock (`performance.now()`, a crossing into JS each time) once
// per poll of a call's task, not at every place the retry loop, the host state and the timers ask
// for the time (src/web/effects.rs, `now` and `Turn`). Against the BUILT package (pkg/node.js),
// with the calls' `fetch` answering at once, so that no other code reads the clock meanwhile.
import { test } from "node:test";
import assert from "node:assert/strict";
import { TileClient } from "../../pkg/node.js";
import { tilePng } from "../server/fault-server.mjs";

const png = tilePng(3, 1, 2);
const answer = () => Promise.resolve(new Response(png, { headers: { "content-type": "image/png", "content-length": String(png.length) } }));

/** Counts `performance.now()` calls while `run` runs. */
async function clockReads(run) {
  const own = Object.getOwnPropertyDescriptor(performance, "now");
  const read = performance.now;
  let reads = 0;
  performance.now = function now() {
    reads += 1;
    return read.call(this);
  };
  try {
    await run();
  } finally {
    if (own) Object.defineProperty(performance, "now", own);
    else delete performance.now;
  }
  return reads;
}

test("a healthy call reads the clock a few times, not at every question the core asks of it", async () => {
  const client = new TileClient({ memoryCacheBytes: 0 });
  const url = (i) => `http://127.0.0.1:9/tile/3/${i}/2.png`;
  // Warm-up: the host's state exists, the module's timers are set up.
  await Promise.all(Array.from({ length: 20 }, (_, i) => client.fetchTile(url(i), { fetch: answer })));
  const calls = 200;
  const reads = await clockReads(() => Promise.all(Array.from({ length: calls }, (_, i) => client.fetchTile(url(1000 + i), { fetch: answer }))));
  const perCall = reads / calls;
  assert.ok(perCall > 0, "the calls read the clock through performance.now()");
  assert.ok(perCall <= 6, `${perCall.toFixed(2)} clock reads per call`);
});
