// TileClient: per-host shared state (concurrency limit and queue, request coalescing, circuit
// breaker, retry budget, Retry-After pauses, mirrors) and the default client behind fetchTile.
// Runs against the BUILT package (pkg/node.js): build it first.
//
// Every test has its own TileClient and its own `run` on the fault server, so the server's
// per-run counters (requests, aborted, peakConcurrent, log) belong to that test alone.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { TileClient, TileError, fetchTile, stats } from "../../pkg/node.js";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { FAST, tileUrl, keyOf, rejection, assertTile, sleep, waitFor, stopwatch, timerTick } from "./helpers.mjs";

let srv;
let host; // the client's host key for srv: "127.0.0.1:PORT"
before(async () => {
  srv = await startFaultServer({ seed: 1 });
  host = `127.0.0.1:${srv.port}`;
  // Warm up the platform's fetch and the tile cache so neither eats into timing budgets.
  await (await fetch(`${srv.url}/health`)).text();
  for (let i = 0; i < 300; i++) tilePng(...grid(i));
});
after(async () => {
  await srv?.close();
});

/** Tile i of a 20-wide grid at zoom 10: distinct coordinates for i = 0 … 399. */
const grid = (i, z = 10) => [z, i % 20, Math.floor(i / 20)];

const EVENT_TYPES = new Set(["attempt", "hedge", "retry", "give-up", "breaker", "pause", "queue"]);

/** onEvent that records events and checks the documented envelope ({type, host}). */
function eventLog() {
  const events = [];
  const bad = [];
  const onEvent = (e) => {
    events.push(e);
    if (!e || typeof e !== "object" || !EVENT_TYPES.has(e.type) || typeof e.host !== "string") bad.push(e);
  };
  const summary = () => {
    const n = {};
    for (const e of events) n[e?.type] = (n[e?.type] ?? 0) + 1;
    return JSON.stringify(n);
  };
  return { events, bad, onEvent, summary };
}

/** Runs fn(i) for i in 0 … n-1 with at most `concurrency` at once (fn must not throw). */
async function pool(n, concurrency, fn) {
  const out = new Array(n);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      while (next < n) {
        const i = next++;
        out[i] = await fn(i);
      }
    }),
  );
  return out;
}

/** Settles a fetchTile promise into {tile} or {err}, stamped with the server's clock. */
const settle = (p) =>
  p.then(
    (tile) => ({ tile, at: srv.now() }),
    (err) => ({ err, at: srv.now() }),
  );

const bytesEqual = (data, truth) => data instanceof Uint8Array && Buffer.from(data.buffer, data.byteOffset, data.byteLength).equals(truth);

const entriesOf = (s, run) => s.log.filter((e) => e.key.startsWith(`${run}/`));

function kinds(results) {
  const n = {};
  for (const r of results) if (r.err) n[r.err.kind ?? String(r.err)] = (n[r.err.kind ?? String(r.err)] ?? 0) + 1;
  return n;
}

// ------------------------------------------------------------------------------------------
// The two load tests run one after the other: each keeps 32 calls going for seconds.
describe("under load", () => {
  test("outage: <= 2 requests per tile during a 3 s outage, >= 95% of the pending tiles within 1.5 s after it", async (t) => {
    const run = "outage";
    const N = 200;
    const ev = eventLog();
    const client = new TileClient({
      baseDelayMs: 100,
      maxDelayMs: 1000,
      // The default breaker (threshold 10, open 500 ms growing to at most 1000 ms).
      onEvent: ev.onEvent,
    });
    const { start, end } = srv.outage(run, 3000);
    const results = await pool(N, 32, (i) => settle(client.fetchTile(tileUrl(srv, run, grid(i)), { deadlineMs: 6000, signal: AbortSignal.timeout(6000) })));

    const during = entriesOf(srv, run).filter((e) => e.t >= start && e.t < end);
    const after = entriesOf(srv, run).filter((e) => e.t >= end);
    const wrong = results.filter((r, i) => r.tile && !bytesEqual(r.tile.data, tilePng(...grid(i))));
    const delivered = results.filter((r) => r.tile);
    const gaveUpBefore = results.filter((r) => r.err && r.at < end);
    const pendingAtEnd = results.filter((r) => r.at >= end);
    const soon = pendingAtEnd.filter((r) => r.tile && r.at <= end + 1500);
    const lateMs = pendingAtEnd
      .filter((r) => r.tile)
      .map((r) => r.at - end)
      .sort((a, b) => a - b);
    t.diagnostic(`requests during the outage: ${during.length} (${(during.length / N).toFixed(2)} per tile); after it: ${after.length}`);
    t.diagnostic(`delivered ${delivered.length}/${N}; gave up before the end ${gaveUpBefore.length}; errors ${JSON.stringify(kinds(results))}`);
    t.diagnostic(
      `pending at the outage end ${pendingAtEnd.length}, delivered within 1500 ms of it ${soon.length}` +
        ` (${((100 * soon.length) / Math.max(1, pendingAtEnd.length)).toFixed(1)}%); delivery after the end:` +
        ` p50 ${Math.round(lateMs[Math.floor(lateMs.length / 2)] ?? NaN)} ms, max ${Math.round(lateMs.at(-1) ?? NaN)} ms`,
    );
    t.diagnostic(`events ${ev.summary()}; stats ${JSON.stringify(client.stats()[host])}`);

    assert.equal(wrong.length, 0, "a tile was delivered with wrong bytes");
    assert.deepEqual(ev.bad, [], "events carry {type, host}");
    assert.ok(during.length <= 2 * N, `${during.length} requests during the outage (> ${2 * N})`);
    assert.ok(pendingAtEnd.length > 0, "no tile was left pending at the outage end");
    assert.ok(
      soon.length >= 0.95 * pendingAtEnd.length,
      `only ${soon.length} of ${pendingAtEnd.length} pending tiles delivered within 1500 ms of the outage end`,
    );
  });

  test("429 storm (bucket 50/s, burst 50, Retry-After 1): <= 10% 429s once the first was seen, every tile delivered", async (t) => {
    const run = "storm";
    const N = 300;
    const ev = eventLog();
    const client = new TileClient({ preset: "interactive", deadlineMs: 20000, onEvent: ev.onEvent });
    const elapsed = stopwatch();
    const results = await pool(N, 32, (i) => settle(client.fetchTile(tileUrl(srv, run, grid(i), { f: "bucket", rate: 50, burst: 50, ra: 1 }))));
    const wall = elapsed();
    const log = entriesOf(srv, run);
    const first429 = log.find((e) => e.status === 429)?.t;
    const late = first429 === undefined ? [] : log.filter((e) => e.t > first429 + 100);
    const late429 = late.filter((e) => e.status === 429).length;
    const requests = srv.requests(run);
    const delivered = results.filter((r, i) => r.tile && bytesEqual(r.tile.data, tilePng(...grid(i)))).length;
    t.diagnostic(
      `${N} tiles in ${(wall / 1000).toFixed(1)} s; ${requests} requests (${(requests / N).toFixed(2)} per tile, target <= 1.2);` +
        ` 429s: ${log.filter((e) => e.status === 429).length} in all`,
    );
    t.diagnostic(
      first429 === undefined
        ? "the server never sent a 429"
        : `first 429 at ${Math.round(first429)} ms; after it + 100 ms: ${late429} of ${late.length} requests were 429` +
            ` (${((100 * late429) / Math.max(1, late.length)).toFixed(1)}%)`,
    );
    t.diagnostic(`delivered ${delivered}/${N}; errors ${JSON.stringify(kinds(results))}; events ${ev.summary()}`);
    t.diagnostic(`stats ${JSON.stringify(client.stats()[host])}`);

    assert.deepEqual(ev.bad, [], "events carry {type, host}");
    assert.equal(delivered, N, `delivered ${delivered}/${N}: ${JSON.stringify(kinds(results))}`);
    assert.ok(late429 <= 0.1 * late.length, `${late429} of ${late.length} requests after the first 429 (+100 ms) were 429`);
    assert.ok(requests <= 1.5 * N, `${requests} requests for ${N} tiles (${(requests / N).toFixed(2)} per tile)`);
  });
});

// ------------------------------------------------------------------------------------------
// Light, independent tests: side by side.
describe("per-host limits", { concurrency: true }, () => {
  test("maxConcurrent 4 (host override): server and stats never see more than 4; the rest is queued (fifo)", async (t) => {
    const run = "maxc";
    // No hedges: a hedge to the same host goes beside the attempt it stands in for, by design,
    // and on a loaded machine one would make the server's peak 5 and its requests 41.
    const client = new TileClient({ hedge: "off", hosts: { [host]: { maxConcurrent: 4 } } });
    const samples = [];
    const sample = () => {
      const s = client.stats()[host];
      if (s) samples.push({ inFlight: s.inFlight, queued: s.queued });
    };
    const calls = Array.from({ length: 40 }, (_, i) => settle(client.fetchTile(tileUrl(srv, run, grid(i), { delay: 50 }))));
    sample();
    const timer = setInterval(sample, 3);
    const results = await Promise.all(calls);
    clearInterval(timer);
    sample();

    const maxInFlight = Math.max(...samples.map((s) => s.inFlight));
    const maxQueued = Math.max(...samples.map((s) => s.queued));
    const arrival = entriesOf(srv, run).map((e) => e.key);
    t.diagnostic(`server peak ${srv.peakConcurrent(run)}; ${samples.length} samples: inFlight max ${maxInFlight}, queued max ${maxQueued}`);
    for (const [i, r] of results.entries()) {
      assert.ok(r.tile, `tile ${i}: ${r.err?.kind} ${r.err?.message}`);
      assertTile(r.tile, tilePng(...grid(i)));
    }
    assert.ok(srv.peakConcurrent(run) <= 4, `server saw ${srv.peakConcurrent(run)} at once`);
    assert.ok(samples.length > 5);
    assert.ok(maxInFlight <= 4, `stats inFlight reached ${maxInFlight}`);
    assert.ok(maxQueued > 0, "stats never showed a queued call");
    assert.equal(srv.requests(run), 40);
    assert.ok(arrival.indexOf(keyOf(run, grid(0))) < arrival.indexOf(keyOf(run, grid(39))), "fifo: the first call is sent before the last");
    const end = client.stats()[host];
    assert.equal(end.inFlight, 0);
    assert.equal(end.queued, 0);
  });

  test('queueOrder "lifo": the last queued call is served before the first queued one', async (t) => {
    const run = "lifo";
    const client = new TileClient({ queueOrder: "lifo", hosts: { [host]: { maxConcurrent: 4 } } });
    // No hedges: a hedge goes beside its attempt, in its slot (src/retry/hedge.rs), and on a
    // loaded machine one made the server see five at once and served its tile out of order.
    const noHedge = { hedge: "off" };
    // Four slow calls take the four slots first …
    const blockers = Array.from({ length: 4 }, (_, i) => settle(client.fetchTile(tileUrl(srv, run, grid(i, 11), { delay: 300 }), noHedge)));
    assert.ok(await waitFor(() => srv.concurrent(run) === 4), `slots taken: ${srv.concurrent(run)}`);
    // … so these 36 are all queued, in submission order 0 … 35.
    const queued = Array.from({ length: 36 }, (_, i) => settle(client.fetchTile(tileUrl(srv, run, grid(i), { delay: 20 }), noHedge)));
    await sleep(20);
    const mid = client.stats()[host];
    const results = await Promise.all([...blockers, ...queued]);
    const order = entriesOf(srv, run)
      .map((e) => e.key)
      .filter((k) => k.startsWith(`${run}/10/`))
      .map((k) => Number(k.split("/")[3]) * 20 + Number(k.split("/")[2])); // back to the submission index
    t.diagnostic(`stats while blocked: inFlight ${mid?.inFlight}, queued ${mid?.queued}; served order of the queued: ${order.join(",")}`);
    for (const r of results) assert.ok(r.tile, `${r.err?.kind} ${r.err?.message}`);
    assert.equal(mid.queued, 36);
    assert.ok(srv.peakConcurrent(run) <= 4, `server saw ${srv.peakConcurrent(run)} at once`);
    assert.equal(order.length, 36);
    assert.ok(order.indexOf(35) < order.indexOf(0), `lifo: the last queued (35) is served before the first (0): ${order.join(",")}`);
  });

  test("coalescing: 20 concurrent calls for one URL -> 1 request, 20 equal but independent Uint8Arrays", async (t) => {
    const run = "coal";
    const xyz = [12, 1, 1];
    const client = new TileClient({});
    const url = tileUrl(srv, run, xyz, { delay: 100 });
    const tiles = await Promise.all(Array.from({ length: 20 }, () => client.fetchTile(url)));
    const truth = tilePng(...xyz);
    for (const tile of tiles) assertTile(tile, truth);
    assert.equal(new Set(tiles.map((x) => x.data)).size, 20, "20 distinct Uint8Array objects");
    tiles[0].data.fill(0);
    for (const tile of tiles.slice(1)) assert.ok(bytesEqual(tile.data, truth), "mutating one tile's data changed another's");
    await sleep(20);
    const s = client.stats()[host];
    t.diagnostic(`server requests ${srv.requests(run)}; stats ${JSON.stringify(s)}`);
    assert.equal(srv.requests(run), 1);
    assert.ok(s.coalesced >= 19, `coalesced ${s.coalesced}`);
  });

  test("coalescing: only calls that send the same headers and judge responses alike share a request", async (t) => {
    const run = "coal-headers";
    const xyz = [12, 1, 4];
    const client = new TileClient({});
    const url = tileUrl(srv, run, xyz, { delay: 100 });
    const calls = [
      client.fetchTile(url, { headers: { authorization: "Bearer one" } }),
      client.fetchTile(url, { headers: { authorization: "Bearer one" } }),
      client.fetchTile(url, { headers: { authorization: "Bearer two" } }),
      client.fetchTile(url, { accept: "image/*" }),
      client.fetchTile(url, { emptyOn: [] }),
      client.fetchTile(url),
      client.fetchTile(url, { deadlineMs: 5000 }),
    ];
    const tiles = await Promise.all(calls);
    for (const tile of tiles) assertTile(tile, tilePng(...xyz));
    const sent = srv.log.filter((e) => e.key?.includes(run)).map((e) => `${e.headers.authorization ?? "-"} ${e.headers.accept ?? "-"}`);
    t.diagnostic(`server requests ${srv.requests(run)}: ${sent.join(" | ")}`);
    // "Bearer one" twice share one; the second token, the accept header, emptyOn and the plain
    // call each need their own; a different deadline alone does not (it joins the plain call's).
    assert.equal(srv.requests(run), 5);
    const seen = srv.log.filter((e) => e.key?.includes(run)).map((e) => e.headers.authorization ?? "-");
    assert.deepEqual(seen.filter((a) => a !== "-").sort(), ["Bearer one", "Bearer two"]);
  });

  test("coalescing: 4 of 5 joined callers abort -> the 5th still gets the tile from the one request", async () => {
    const run = "coal-part";
    const xyz = [12, 1, 2];
    const client = new TileClient({});
    const url = tileUrl(srv, run, xyz, { delay: 200 });
    const acs = Array.from({ length: 4 }, () => new AbortController());
    const calls = [...acs.map((ac) => settle(client.fetchTile(url, { signal: ac.signal }))), settle(client.fetchTile(url))];
    // Abort once the shared request is at the server (>= 20 ms after the calls).
    await sleep(20);
    assert.ok(await waitFor(() => srv.requests(run) === 1), "the shared request arrived");
    for (const ac of acs) ac.abort();
    const results = await Promise.all(calls);
    for (const r of results.slice(0, 4)) {
      assert.ok(r.err instanceof TileError, `aborted caller resolved: ${r.tile?.status}`);
      assert.equal(r.err.kind, "aborted", r.err.message);
    }
    assert.ok(results[4].tile, `5th caller: ${results[4].err?.kind} ${results[4].err?.message}`);
    assertTile(results[4].tile, tilePng(...xyz));
    assert.equal(srv.requests(run), 1);
    assert.equal(srv.aborted(run), 0, "the shared request was not aborted while a caller still wanted it");
  });

  test("coalescing: all 5 joined callers abort -> the shared request is aborted", async () => {
    const run = "coal-all";
    const xyz = [12, 1, 3];
    const client = new TileClient({});
    const url = tileUrl(srv, run, xyz, { delay: 2000 });
    const acs = Array.from({ length: 5 }, () => new AbortController());
    const calls = acs.map((ac) => settle(client.fetchTile(url, { signal: ac.signal })));
    await sleep(20);
    assert.ok(await waitFor(() => srv.requests(run) === 1), "the shared request arrived");
    for (const ac of acs) ac.abort();
    const results = await Promise.all(calls);
    for (const r of results) assert.equal(r.err?.kind, "aborted", r.err?.message ?? "resolved");
    assert.ok(await waitFor(() => srv.aborted(run) === 1, { timeout: 1000 }), `server aborted count ${srv.aborted(run)}`);
    assert.equal(srv.requests(run), 1);
  });

  test("breaker: once open, a call whose deadline ends before half-open rejects circuit-open at once, sending nothing", async (t) => {
    const run = "breaker";
    const ev = eventLog();
    const client = new TileClient({ ...FAST, breaker: { failureThreshold: 3, openMs: 5000 }, onEvent: ev.onEvent });
    // Three failing attempts open the breaker.
    const warm = await Promise.all([0, 1, 2].map((i) => settle(client.fetchTile(tileUrl(srv, run, grid(i), { f: 503 }), { deadlineMs: 1000 }))));
    assert.ok(
      warm.every((r) => r.err),
      "f=503 cannot succeed",
    );
    assert.ok(await waitFor(() => client.stats()[host]?.breaker.state === "open", { timeout: 1000 }), "breaker opened");
    const before = srv.requests(run);
    const elapsed = stopwatch();
    const tick = timerTick();
    const err = await rejection(() => client.fetchTile(tileUrl(srv, run, grid(3), { f: 503 }), { deadlineMs: 1000 }), TileError, "client.fetchTile");
    const wall = elapsed();
    const late = tick.fired();
    t.diagnostic(`warm-up: ${JSON.stringify(kinds(warm))}, ${before} requests; circuit-open after ${wall.toFixed(1)} ms; events ${ev.summary()}`);
    assert.equal(err.kind, "circuit-open", err.message);
    assert.ok(!late, `rejected after a setTimeout(0) scheduled at the call (${wall.toFixed(1)} ms)`);
    assert.equal(err.attempts, 0);
    await sleep(50);
    assert.equal(srv.requests(run), before, "the fail-fast call sent nothing");
    const s = client.stats()[host];
    assert.equal(s.breaker.state, "open");
    assert.equal(typeof s.breaker.changedAt, "number");
    assert.ok(
      ev.events.some((e) => e.type === "breaker" && e.host === host),
      "a breaker event for the host",
    );
    assert.deepEqual(ev.bad, []);
  });

  test("host overrides take nested fields too: hosts[h].breaker opens after 2 failures, the default (1000) would not", async (t) => {
    const run = "hostbreaker";
    const client = new TileClient({
      ...FAST,
      breaker: { failureThreshold: 1000 },
      hosts: { [host]: { breaker: { failureThreshold: 2, openMs: 5000 }, retryBudget: { ratio: 1, minPerSecond: 10 } } },
    });
    const r = await settle(client.fetchTile(tileUrl(srv, run, [3, 1, 0], { f: 503 }), { deadlineMs: 1000 }));
    t.diagnostic(`${r.err?.kind} after ${srv.requests(run)} requests: ${r.err?.message}`);
    assert.equal(client.stats()[host].breaker.state, "open");
    assert.equal(srv.requests(run), 2, "the breaker opened after the second failure and stopped the retries");
    assert.equal(r.err?.kind, "circuit-open", r.err?.message);
  });

  test("retry budget (ratio 0.1, 1/s): 50 tiles always 503 for 3 s -> <= 70 requests; refused retries wait, give-ups are deadline (cause: the 503)", async (t) => {
    const run = "budget";
    const N = 50;
    const client = new TileClient({
      baseDelayMs: 20, // short backoff: the budget, not the backoff, has to be what limits retries
      maxDelayMs: 200,
      retryBudget: { ratio: 0.1, minPerSecond: 1 },
      breaker: { failureThreshold: 1000 },
    });
    const elapsed = stopwatch();
    const results = await Promise.all(
      Array.from({ length: N }, (_, i) => settle(client.fetchTile(tileUrl(srv, run, grid(i), { f: 503 }), { deadlineMs: 3000 }))),
    );
    const wall = elapsed();
    await sleep(50);
    const requests = srv.requests(run);
    t.diagnostic(`${requests} requests for ${N} tiles in ${wall.toFixed(0)} ms; errors ${JSON.stringify(kinds(results))}`);
    t.diagnostic(`stats ${JSON.stringify(client.stats()[host])}`);
    for (const r of results) {
      assert.ok(r.err instanceof TileError, "f=503 cannot succeed");
      // Never the last 503's own kind ("http" reads as permanent): the budget paced the retries.
      assert.equal(r.err.kind, "deadline", r.err.message);
      assert.equal(r.err.cause?.status, 503);
    }
    assert.ok(requests <= 70, `${requests} requests (budget: 50 + 5 + ~3 + slack)`);
    assert.ok(requests >= N, "every tile was tried once");
  });

  test("mirrors on one host: [urlA (503), urlB (ok)] resolves from B; A is asked at most once per attempt", async (t) => {
    const xyz = [12, 2, 2];
    const client = new TileClient({ ...FAST });
    const tile = await client.fetchTile([tileUrl(srv, "mirA", xyz, { f: 503 }), tileUrl(srv, "mirB", xyz)]);
    assertTile(tile, tilePng(...xyz));
    t.diagnostic(`attempts ${tile.attempts}; A ${srv.requests("mirA")}, B ${srv.requests("mirB")}`);
    assert.ok(srv.requests("mirA") <= tile.attempts);
    assert.ok(srv.requests("mirB") >= 1);
    assert.ok(srv.requests("mirA") + srv.requests("mirB") <= tile.attempts);
  });

  test("mirrors on two hosts (A down, B up): the list and an {s} template both resolve", async (t) => {
    const down = await startFaultServer({ seed: 2 });
    const up = await startFaultServer({ seed: 3 });
    try {
      const client = new TileClient({ ...FAST });
      const xyz = [12, 3, 3];
      const tile = await client.fetchTile([tileUrl(down, "mir2", xyz, { f: 503 }), tileUrl(up, "mir2", xyz)]);
      assertTile(tile, tilePng(...xyz));
      t.diagnostic(`list: attempts ${tile.attempts}; down ${down.requests("mir2")}, up ${up.requests("mir2")}`);
      assert.ok(down.requests("mir2") <= tile.attempts);
      assert.ok(up.requests("mir2") >= 1);
      // {s} without DNS (a.localhost does not resolve here): the "subdomains" are the two ports,
      // which are valid host labels too. A serves 503 for run mir3 while its outage lasts; B is healthy.
      down.outage("mir3", 60000);
      const xyz2 = [12, 3, 4];
      const template = `http://127.0.0.1:{s}/tile/${xyz2.join("/")}.png?run=mir3`;
      const tile2 = await client.fetchTile(template, { subdomains: [String(down.port), String(up.port)] });
      assertTile(tile2, tilePng(...xyz2));
      t.diagnostic(`{s}: attempts ${tile2.attempts}; down ${down.requests("mir3")}, up ${up.requests("mir3")}`);
      assert.ok(down.requests("mir3") <= tile2.attempts);
      assert.ok(up.requests("mir3") >= 1);
      const stats = client.stats();
      assert.ok(stats[`127.0.0.1:${up.port}`], `stats has the up host: ${Object.keys(stats)}`);
    } finally {
      await down.close();
      await up.close();
    }
  });

  test("stats(): JSON-serialisable, keyed by host, counts a success and a permanent failure", async () => {
    const run = "stats";
    const client = new TileClient({});
    assertTile(await client.fetchTile(tileUrl(srv, run, [3, 0, 0])), tilePng(3, 0, 0));
    const err = await rejection(() => client.fetchTile(tileUrl(srv, run, [3, 0, 1], { f: 404 })), TileError, "client.fetchTile");
    assert.equal(err.kind, "http");
    const all = client.stats();
    assert.deepEqual(JSON.parse(JSON.stringify(all)), all, "JSON round trip");
    assert.deepEqual(Object.keys(all), [host]);
    const s = all[host];
    for (const f of ["requests", "attempts", "retries", "successes", "aborted", "inFlight", "queued", "maxInFlight", "coalesced", "retryTokens"]) {
      assert.equal(typeof s[f], "number", f);
    }
    assert.equal(s.requests, 2);
    assert.equal(s.attempts, 2);
    assert.equal(s.retries, 0);
    assert.equal(s.successes, 1);
    assert.equal(s.giveUps.http, 1);
    for (const [k, v] of Object.entries(s.giveUps)) if (k !== "http") assert.equal(v, 0, `giveUps.${k}`);
    assert.equal(s.aborted, 0);
    assert.equal(s.inFlight, 0);
    assert.equal(s.queued, 0);
    assert.equal(s.coalesced, 0);
    assert.equal(s.breaker.state, "closed");
    assert.equal(typeof s.breaker.changedAt, "number");
    assert.equal(s.pausedUntil, null);
    for (const p of ["p50", "p95", "p99"]) assert.equal(typeof s.latencyMs[p], "number", `latencyMs.${p}`);
    assert.ok(s.latencyMs.p50 <= s.latencyMs.p95 && s.latencyMs.p95 <= s.latencyMs.p99);
  });
});

// ------------------------------------------------------------------------------------------
describe("cancellation", () => {
  test("100 queued calls sharing one signal: abort() rejects them all within one timer tick, none was sent", async (t) => {
    const run = "abortq";
    const client = new TileClient({ maxConcurrent: 1 });
    const hangAc = new AbortController();
    const hanging = settle(
      client.fetchTile(tileUrl(srv, run, [13, 0, 0], { f: "hang" }), {
        signal: hangAc.signal,
        attemptTimeoutMs: 30000,
        deadlineMs: 30000,
      }),
    );
    try {
      await abortQueued(t, run, client, hanging, hangAc);
    } finally {
      hangAc.abort(); // a failed assertion must not leave a 30 s request keeping the process alive
    }
  });
});

/** The body of the test above (its caller aborts the hanging call whatever happens). */
async function abortQueued(t, run, client, hanging, hangAc) {
  assert.ok(await waitFor(() => srv.requests(run) === 1), "the hanging request arrived");
  const ac = new AbortController();
  let abortedAt = 0;
  let tick = null;
  const queued = Array.from({ length: 100 }, (_, i) =>
    client.fetchTile(tileUrl(srv, run, grid(i)), { signal: ac.signal }).then(
      (tile) => ({ tile, lag: performance.now() - abortedAt, late: tick.fired() }),
      (err) => ({ err, lag: performance.now() - abortedAt, late: tick.fired() }),
    ),
  );
  await sleep(50);
  const mid = client.stats()[host];
  abortedAt = performance.now();
  ac.abort();
  tick = timerTick();
  const results = await Promise.all(queued);
  const maxLag = Math.max(...results.map((r) => r.lag));
  const late = results.filter((r) => r.late).length;
  t.diagnostic(
    `stats before abort: inFlight ${mid.inFlight}, queued ${mid.queued}; all rejected within ${maxLag.toFixed(1)} ms, ${late} after the first timer tick`,
  );
  assert.equal(mid.inFlight, 1);
  assert.equal(mid.queued, 100);
  for (const r of results) {
    assert.ok(r.err instanceof TileError, "a queued call resolved");
    assert.equal(r.err.kind, "aborted", r.err.message);
    assert.equal(r.err.attempts, 0);
  }
  await sleep(30);
  assert.equal(srv.requests(run), 1, "only the hanging request was sent");
  assert.equal(client.stats()[host].queued, 0);
  hangAc.abort();
  const h = await hanging;
  assert.equal(h.err?.kind, "aborted", h.err?.message ?? "resolved");
  assert.ok(await waitFor(() => srv.aborted(run) === 1, { timeout: 1000 }), "the hanging request was aborted");
  assert.ok(await waitFor(() => client.stats()[host].inFlight === 0, { timeout: 1000 }));
  assert.equal(client.stats()[host].aborted, 101);
  // Last, so that a slow rejection does not hide the other findings.
  assert.equal(late, 0, `${late} of 100 rejections came after a setTimeout(0) scheduled at abort()`);
}

// ------------------------------------------------------------------------------------------
describe("the fetch option", () => {
  /** A fetch that records what it was given and passes it on to the global one. */
  const recording = () => {
    const seen = [];
    const wrapped = (input, init) => {
      seen.push({ url: typeof input === "string" ? input : input.url, signal: init?.signal });
      return fetch(input, init);
    };
    return { seen, wrapped };
  };

  test("every attempt calls it, with the attempt's signal; the server sees what it sends", async () => {
    const run = "fetchopt";
    const { seen, wrapped } = recording();
    const client = new TileClient({ ...FAST, hedge: "off" });
    const tile = await client.fetchTile(tileUrl(srv, run, [4, 1, 1], { f: 503, n: 2 }), { fetch: wrapped });
    assertTile(tile, tilePng(4, 1, 1));
    assert.equal(tile.attempts, 3);
    assert.equal(seen.length, 3, "three attempts, three calls of the option");
    assert.equal(srv.requests(run), 3);
    for (const s of seen) assert.ok(s.signal instanceof AbortSignal, "each attempt passes its own signal");
    assert.notEqual(seen[0].signal, seen[1].signal);
  });

  test("a client's fetch serves its calls; a call's own replaces it; a hedge calls it too", async () => {
    const run = "fetchopt2";
    const own = recording();
    const call = recording();
    const client = new TileClient({ ...FAST, fetch: own.wrapped });
    await client.fetchTile(tileUrl(srv, run, [4, 2, 1]));
    assert.equal(own.seen.length, 1);
    await client.fetchTile(tileUrl(srv, run, [4, 2, 2]), { fetch: call.wrapped });
    assert.equal(own.seen.length, 1, "the call's fetch replaced the client's");
    assert.equal(call.seen.length, 1);
    // A hung first attempt: the hedge after 100 ms goes through the same fetch and wins.
    const hedged = recording();
    const tile = await client.fetchTile(tileUrl(srv, run, [4, 2, 3], { f: "hang", n: 1 }), { fetch: hedged.wrapped, hedge: 100 });
    assertTile(tile, tilePng(4, 2, 3));
    assert.equal(hedged.seen.length, 2, "the attempt and its hedge");
  });

  test("what it throws or resolves that is no Response is a network failure, retried", async () => {
    let calls = 0;
    const flaky = (input, init) => {
      calls++;
      if (calls === 1) throw new TypeError("synthetic refusal");
      if (calls === 2) return Promise.resolve({ not: "a response" });
      return fetch(input, init);
    };
    const tile = await new TileClient({ ...FAST, hedge: "off" }).fetchTile(tileUrl(srv, "fetchopt3", [4, 3, 1]), { fetch: flaky });
    assertTile(tile, tilePng(4, 3, 1));
    assert.equal(tile.attempts, 3);
  });

  test("not a function: invalid-options naming the field, at the call and in the config; never per host", async () => {
    const url = tileUrl(srv, "fetchopt4", [4, 4, 1]);
    const e1 = await rejection(() => fetchTile(url, { fetch: "fetch" }), TileError, "fetchTile");
    assert.equal(e1.kind, "invalid-options");
    assert.match(e1.message, /\bfetch\b/);
    assert.throws(
      () => new TileClient({ fetch: 5 }),
      (e) => e instanceof TileError && e.kind === "invalid-options" && /\bfetch\b/.test(e.message),
    );
    assert.throws(
      () => new TileClient({ hosts: { [host]: { fetch: () => {} } } }),
      (e) => e instanceof TileError && e.kind === "invalid-options" && /fetch.*cannot be set per host/.test(e.message),
    );
  });
});

// ------------------------------------------------------------------------------------------
describe("the default client and configuration", () => {
  test("top-level fetchTile shares per-host limits: 16 at once for a host's first second, more once it has answered as fast; a set maxConcurrent holds", async (t) => {
    const host = new URL(srv.url).host;
    // 40 at once from a host not met before: the default's 16.
    const run = "default";
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => settle(fetchTile(tileUrl(srv, run, grid(i), { delay: 50 })))));
    for (const [i, r] of results.entries()) {
      assert.ok(r.tile, `tile ${i}: ${r.err?.kind} ${r.err?.message}`);
      assertTile(r.tile, tilePng(...grid(i)));
    }
    assert.equal(srv.peakConcurrent(run), 16, "the default's 16");
    // A hedge, on a machine this loaded, may go beside an attempt (a clean-clone run saw 42).
    const hedged = stats()[host].hedges;
    assert.ok(srv.requests(run) >= 40 && srv.requests(run) <= 40 + hedged, `${srv.requests(run)} requests, ${hedged} hedges`);
    // Then 40 callers for 500 tiles (over a second and a half at 16): once the host has a
    // record, more go at once.
    const session = async (get, name) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: 40 }, async () => {
          while (next < 500) {
            const i = next++;
            await get(tileUrl(srv, name, grid(i), { delay: 50 }));
          }
        }),
      );
    };
    // The limit, sampled: on this loaded machine the client's own CPU may slow its answers as
    // more go out, which takes it back down; it grew at some point, never past 64.
    let highest = 0;
    const sampler = setInterval(() => (highest = Math.max(highest, stats()[host]?.maxInFlight ?? 0)), 5);
    await session((url) => fetchTile(url), "grown");
    clearInterval(sampler);
    t.diagnostic(`server peak ${srv.peakConcurrent("grown")}, limit at most ${highest} (default maxConcurrent 16, adaptive up to 64)`);
    assert.ok(highest > 16, `the limit grew: ${highest}`);
    assert.ok(srv.peakConcurrent("grown") <= 64, `server saw ${srv.peakConcurrent("grown")} at once`);
    const fixed = new TileClient({ maxConcurrent: 16 });
    await session((url) => fixed.fetchTile(url), "fixed");
    // Fixed: its attempts 16 at a time (a hedge, on a machine this loaded, may go beside one).
    const hedges = fixed.stats()[host].hedges;
    assert.ok(srv.peakConcurrent("fixed") <= 16 + hedges, `maxConcurrent 16: the server saw ${srv.peakConcurrent("fixed")} at once, ${hedges} hedges`);
    assert.equal(fixed.stats()[host].maxInFlight, 16);
  });

  // [label, config, field the message must name (the leaf; a dotted path contains it)]
  const bad = [
    ["{maxconcurrent: 3} (wrong case)", { maxconcurrent: 3 }, "maxconcurrent"],
    ["{breaker: {openMs: -1}}", { breaker: { openMs: -1 } }, "openMs"],
    ['{queueOrder: "random"}', { queueOrder: "random" }, "queueOrder"],
    ['{hosts: {"x": {deadlinems: 1}}}', { hosts: { x: { deadlinems: 1 } } }, "deadlinems"],
    // The fetchTile rules (wrong types, NaN, Infinity, negative durations) hold for client fields too.
    ["{maxConcurrent: -1}", { maxConcurrent: -1 }, "maxConcurrent"],
    ['{breaker: {failureThreshold: "5"}}', { breaker: { failureThreshold: "5" } }, "failureThreshold"],
    ["{retryBudget: {ratio: NaN}}", { retryBudget: { ratio: NaN } }, "ratio"],
    ["{startJitterMs: Infinity}", { startJitterMs: Infinity }, "startJitterMs"],
    ['{jitter: "sometimes"}', { jitter: "sometimes" }, "jitter"],
    ["{onEvent: 5}", { onEvent: 5 }, "onEvent"],
    ["{hosts: {x: {breaker: {nope: 1}}}}", { hosts: { x: { breaker: { nope: 1 } } } }, "nope"],
  ];
  for (const [label, config, field] of bad) {
    test(`new TileClient(${label}) throws invalid-options naming ${field}`, () => {
      assert.throws(
        () => new TileClient(config),
        (e) => {
          assert.ok(e instanceof TileError, `expected a TileError, got ${e?.stack ?? e}`);
          assert.equal(e.kind, "invalid-options", `${e.kind}: ${e.message}`);
          assert.ok(e.message.includes(field), `message ${JSON.stringify(e.message)} should name ${field}`);
          return true;
        },
      );
    });
  }

  test("a bad per-call option rejects invalid-options (a promise, not a throw)", async () => {
    const client = new TileClient();
    const err = await rejection(() => client.fetchTile(tileUrl(srv, "badcall", [1, 0, 0]), { deadlinems: 1 }), TileError, "client.fetchTile");
    assert.equal(err.kind, "invalid-options");
    assert.ok(err.message.includes("deadlinems"), err.message);
    assert.equal(srv.requests("badcall"), 0);
  });

  test("after the bad configs the module still works (new client and top-level fetchTile)", async () => {
    const client = new TileClient();
    assertTile(await client.fetchTile(tileUrl(srv, "after-bad", [1, 0, 0])), tilePng(1, 0, 0));
    assertTile(await fetchTile(tileUrl(srv, "after-bad", [1, 0, 1])), tilePng(1, 0, 1));
  });
});

describe("stale responses (maxAgeS)", () => {
  test("a tile older than maxAgeS is fetched once more with a cache-busting parameter", async () => {
    const client = new TileClient();
    const run = "stale";
    const xyz = [6, 1, 2];
    const tile = await client.fetchTile(tileUrl(srv, run, xyz, { age: 90000 }), { maxAgeS: 3600 });
    assertTile(tile, tilePng(...xyz), { attempts: 2 });
    const paths = entriesOf(srv, run).map((e) => e.path);
    assert.equal(paths.length, 2);
    assert.ok(!paths[0].includes("_tf="), paths[0]);
    assert.match(paths[1], /[?&]_tf=\d+/, "the second request carries the cache buster");
  });

  test("off by default, and a fresh Age is delivered at once", async () => {
    const client = new TileClient();
    const old = await client.fetchTile(tileUrl(srv, "stale-off", [6, 1, 3], { age: 90000 }));
    assert.equal(old.attempts, 1);
    const fresh = await client.fetchTile(tileUrl(srv, "stale-fresh", [6, 1, 4], { age: 10 }), { maxAgeS: 3600 });
    assert.equal(fresh.attempts, 1);
  });
});

describe("coalescing after every caller left", () => {
  test("a call just after every caller of a flight aborted gets the tile (never the torn-down flight)", async () => {
    const client = new TileClient();
    for (const [i, settleFirst] of [
      [0, false],
      [1, true],
    ]) {
      const run = `reflight${i}`;
      const xyz = [7, 3, i];
      const url = tileUrl(srv, run, xyz, { delay: 100 });
      const ac = new AbortController();
      const first = Array.from({ length: 3 }, () => client.fetchTile(url, { signal: ac.signal }).catch((e) => e));
      await sleep(20);
      ac.abort();
      // Either at once (the new call keeps the flight alive) or once the callers have left (it
      // is being torn down, so the new call must start its own).
      if (settleFirst) for (const e of await Promise.all(first)) assert.equal(e.kind, "aborted");
      const tile = await client.fetchTile(url);
      assertTile(tile, tilePng(...xyz));
      assert.ok([1, 2].includes(srv.requests(run)), `requests ${srv.requests(run)}`);
    }
  });
});

describe("hostSettings: what calls to a host run with, as the core resolves it", () => {
  test("the presets' defaults, the client's settings, and a host's own rule over both", () => {
    assert.deepEqual(new TileClient().hostSettings("a.example"), { maxConcurrent: 16, halfOpenProbes: 1, deadlineMs: 6000, maxOpenMs: 1000 });
    assert.deepEqual(new TileClient({ preset: "batch" }).hostSettings("a.example"), {
      maxConcurrent: 16,
      halfOpenProbes: 1,
      deadlineMs: 180000,
      maxOpenMs: 60000,
    });
    const client = new TileClient({
      maxConcurrent: 8,
      deadlineMs: 9000,
      hosts: { "b.example:8080": { maxConcurrent: 2, breaker: { halfOpenProbes: 3, maxOpenMs: 5000 }, deadlineMs: 2000 }, "c.example": { preset: "batch" } },
    });
    assert.deepEqual(client.hostSettings("a.example"), { maxConcurrent: 8, halfOpenProbes: 1, deadlineMs: 9000, maxOpenMs: 1000 });
    assert.deepEqual(client.hostSettings("b.example:8080"), { maxConcurrent: 2, halfOpenProbes: 3, deadlineMs: 2000, maxOpenMs: 5000 });
    assert.equal(client.hostSettings("c.example").maxOpenMs, 60000, "a host's own preset");
  });
});
