// Hedged attempts through the built package (pkg/node.js) against the loopback fault server: a
// request that hangs gets a hedge beside it, the hedge's tile is delivered, and the hung request
// is aborted (the server sees the abort). The race itself is tested on a virtual clock in
// tests/hedging.rs; this checks the platform half: two real fetches, one aborted by a drop.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { TileClient, TileError } from "../../pkg/node.js";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { tileUrl, keyOf, rejection, assertTile, waitFor } from "./helpers.mjs";

let srv;
before(async () => {
  srv = await startFaultServer({ seed: 5 });
  await (await fetch(`${srv.url}/health`)).text();
});
after(async () => {
  await srv?.close();
});

test("a hung request gets a hedge after `hedge` ms; the hedge's tile wins and the hung one is aborted", async () => {
  const xyz = [14, 3, 4];
  const run = "hedge-hang";
  const events = [];
  const client = new TileClient({ onEvent: (e) => events.push(e) });
  const started = performance.now();
  const tile = await client.fetchTile(tileUrl(srv, run, xyz, { f: "hang", n: 1 }), { hedge: 100 });
  const took = performance.now() - started;
  assertTile(tile, tilePng(...xyz), { attempts: 2 });
  // The attempt timeout is 4 s: without the hedge the tile would take that long.
  assert.ok(took >= 95 && took < 2000, `tile after ${Math.round(took)} ms`);
  assert.equal(srv.requests(keyOf(run, xyz)), 2);
  assert.ok(await waitFor(() => srv.aborted(keyOf(run, xyz)) === 1), "the hung request was aborted");
  const hedge = events.find((e) => e.type === "hedge");
  assert.deepEqual(hedge, { type: "hedge", host: new URL(srv.url).host, attempt: 2, afterMs: 100 });
  const stats = client.stats()[new URL(srv.url).host];
  assert.equal(stats.hedges, 1);
  assert.equal(stats.hedgesWon, 1);
  assert.equal(stats.attempts, 2);
});

test('hedge: "off" waits the attempt timeout instead', async () => {
  const xyz = [14, 3, 5];
  const run = "hedge-off";
  const client = new TileClient({ attemptTimeoutMs: 400 });
  const started = performance.now();
  const tile = await client.fetchTile(tileUrl(srv, run, xyz, { f: "hang", n: 1 }), { hedge: "off", baseDelayMs: 10 });
  assertTile(tile, tilePng(...xyz), { attempts: 2 });
  assert.ok(performance.now() - started >= 395, "the hung attempt ran to its timeout");
  assert.equal(client.stats()[new URL(srv.url).host].hedges, 0);
});

test("a bad hedge is an invalid-options error naming the field", async () => {
  for (const hedge of ["sometimes", -5, 0, true, Number.NaN]) {
    const e = await rejection(() => new TileClient().fetchTile(`${srv.url}/tile/1/0/0.png`, { hedge }), TileError);
    assert.equal(e.kind, "invalid-options");
    assert.match(e.message, /hedge/);
  }
});
