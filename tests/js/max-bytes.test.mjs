// maxBytes in Node (pkg/node.js) against the loopback fault server: a body far too large to be a
// tile, streamed (600 MiB, no Content-Length), declared (Content-Length: 600 MiB) and a gzip bomb
// (a small body that inflates to 64 MiB), with the default bound (32 MiB); then a tile exactly at
// the bound and one byte over, with a known length and counted while read. Each over-size case
// ends as kind "too-large" after one request, the declared one before its body is read.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { fetchTile, TileClient, TileError } from "../../pkg/node.js";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { startServerProcess } from "../../bench/server-process.mjs";

const MIB = 1024 * 1024;
const DEFAULT_MAX = 32 * MIB;
let srv;
// The same server in a process of its own, for the cases whose memory is measured: its buffers
// are not this process's.
let far;
before(async () => {
  [srv, far] = await Promise.all([startFaultServer({ seed: 1 }), startServerProcess()]);
});
after(async () => {
  await Promise.all([srv?.close(), far?.stop()]);
});

const farRequests = async (run) => (await (await fetch(`${far.url}/count?run=${run}`)).json()).requests;

async function rejection(promise) {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail("expected a rejection");
}

/**
 * Calls a tile with `q` on `server` (srv or far); what it ended as, the requests, the bytes the
 * server wrote (srv only) and the peak growth of this process's RSS.
 */
async function measure(server, run, q, options) {
  const rss0 = process.memoryUsage().rss;
  let peak = rss0;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const t0 = performance.now();
  const error = await rejection(fetchTile(`${server.url}/tile/3/2/1.png?run=${run}&${q}`, options));
  const ms = performance.now() - t0;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  await new Promise((resolve) => setTimeout(resolve, 100)); // the server sees the abort
  const mine = server === srv ? srv.log.filter((e) => e.key.startsWith(`${run}/`)) : [];
  const sent = mine.reduce((n, e) => n + (e.bytesSent ?? 0), 0);
  const requests = server === srv ? srv.requests(run) : await farRequests(run);
  return { error, ms, requests, sent, grewMiB: (peak - rss0) / MIB };
}

function assertTooLarge(r, { declared }) {
  assert.ok(r.error instanceof TileError, String(r.error));
  assert.equal(r.error.kind, "too-large", r.error.message);
  assert.equal(r.error.attempts, 1);
  assert.equal(r.requests, 1, "one request: not retried");
  assert.match(r.error.message, declared ? /declared \d+ bytes \(Content-Length\)/ : /passed maxBytes \(\d+\) at \d+ bytes/);
}

test("a streamed 600 MiB body: cut at the default bound after one request, memory bounded", async (t) => {
  const r = await measure(far, "huge", "f=huge", {});
  assertTooLarge(r, { declared: false });
  const cutAt = Number(/at (\d+) bytes/.exec(r.error.message)[1]);
  assert.ok(cutAt > DEFAULT_MAX && cutAt <= DEFAULT_MAX + MIB, `cut within a chunk of the bound: at ${cutAt} B`);
  // What tilefetch holds is the bound plus one chunk; RSS adds what the platform buffered and has
  // not yet freed, which for a plain fetch + arrayBuffer() of a body of the bound's size is more
  // than that again. Without the bound, the whole body was read, four times.
  assert.ok(r.grewMiB < 4 * 32, `RSS grew by ${r.grewMiB.toFixed(1)} MiB`);
  t.diagnostic(`cut at ${cutAt} B (bound ${DEFAULT_MAX}); ${Math.round(r.ms)} ms, 1 request, RSS +${r.grewMiB.toFixed(1)} MiB (peak)`);
});

test("a declared 600 MiB body: refused before it is read", async (t) => {
  const r = await measure(srv, "hugelen", "f=hugelen", {});
  assertTooLarge(r, { declared: true });
  assert.equal(r.error.message.includes(`${600 * MIB} bytes`), true, r.error.message);
  assert.ok(r.sent < 16 * MIB, `the server got to send ${r.sent} B (socket buffers), not the body`);
  assert.ok(r.grewMiB < 16, `RSS grew by ${r.grewMiB.toFixed(1)} MiB`);
  t.diagnostic(`${Math.round(r.ms)} ms, 1 request, server sent ${(r.sent / MIB).toFixed(1)} MiB, RSS +${r.grewMiB.toFixed(1)} MiB (peak)`);
});

test("a gzip bomb (inflates to 64 MiB): counted after decoding, cut at the bound", async (t) => {
  // The server compresses its bomb once, on the first request for it; under load that took over a
  // second (a clean-clone CI run), long enough for the default hedge to send a second request. An
  // uncounted request first, so that the measured call meets a server that answers at once.
  await fetch(`${far.url}/tile/0/0/0.png?run=bomb-warm-up&f=gzipbomb`).then((response) => response.body?.cancel());
  const r = await measure(far, "bomb", "f=gzipbomb", {});
  assertTooLarge(r, { declared: false });
  assert.ok(r.grewMiB < 4 * 32, `RSS grew by ${r.grewMiB.toFixed(1)} MiB`);
  t.diagnostic(`${Math.round(r.ms)} ms, 1 request, RSS +${r.grewMiB.toFixed(1)} MiB (peak)`);
});

test("a tile exactly at maxBytes is a tile; one byte over is too-large (declared and counted)", async () => {
  const png = tilePng(3, 2, 1);
  const client = new TileClient();
  // Content-Length known: the declared check.
  const at = await client.fetchTile(`${srv.url}/tile/3/2/1.png?run=exact`, { maxBytes: png.length });
  assert.equal(at.data.length, png.length);
  const over = await rejection(client.fetchTile(`${srv.url}/tile/3/2/1.png?run=over`, { maxBytes: png.length - 1 }));
  assert.deepEqual([over.kind, over.attempts], ["too-large", 1], over.message);
  assert.match(over.message, /declared/);
  // gzip-encoded: the length is known only after decoding, so the read counts.
  const atGz = await client.fetchTile(`${srv.url}/tile/3/2/1.png?run=exact-gz&f=gzip`, { maxBytes: png.length });
  assert.deepEqual(Buffer.from(atGz.data), png);
  const overGz = await rejection(client.fetchTile(`${srv.url}/tile/3/2/1.png?run=over-gz&f=gzip`, { maxBytes: png.length - 1 }));
  assert.deepEqual([overGz.kind, overGz.attempts], ["too-large", 1], overGz.message);
  assert.match(overGz.message, /passed maxBytes/);
  assert.equal(srv.requests("over") + srv.requests("over-gz"), 2);
  // Not held against the host: its breaker is closed and a tile after them comes at once.
  const host = Object.values(client.stats())[0];
  assert.equal(host.breaker.state, "closed");
  assert.deepEqual(host.giveUps, { "too-large": 2 });
});

test("maxBytes that is no whole number of bytes: invalid-options naming it", async () => {
  for (const bad of [0, -1, 1.5, "32MB", Number.POSITIVE_INFINITY]) {
    const e = await rejection(fetchTile(`${srv.url}/tile/3/2/1.png?run=bad`, { maxBytes: bad }));
    assert.equal(e.kind, "invalid-options");
    assert.match(e.message, /maxBytes/);
  }
  assert.equal(srv.requests("bad"), 0);
});
