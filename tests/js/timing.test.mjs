// fetchTile's clocks: Retry-After, attempt timeouts, the deadline and AbortSignal.
// Runs against the BUILT package (pkg/node.js): build it first.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { TileClient, TileError } from "../../pkg/node.js";

// Each call on a client of its own: these tests are about one call's retries, and what calls to
// a host share (a pause, the breaker, the budget) is tested in client.test.mjs.
const fetchTile = (url, options) => new TileClient().fetchTile(url, options);
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { FAST, tileUrl, keyOf, rejection, assertTile, sleep, waitFor, stopwatch, timerTick, referenceTimer } from "./helpers.mjs";

let srv;
before(async () => {
  srv = await startFaultServer({ seed: 1 });
  // Warm up the platform's fetch (lazy-loaded in Node) so it does not eat into timing budgets.
  await (await fetch(`${srv.url}/health`)).text();
  for (let i = 0; i < 16; i++) tilePng(12 + (i >> 3), 0, i & 7);
});
after(async () => {
  await srv?.close();
});

const arrivals = (key) => srv.log.filter((e) => e.key === key).map((e) => e.t);

// Waiting-dominated tests: they run side by side, the event loop stays idle.
describe("Retry-After", { concurrency: true }, () => {
  test("429 ra=1: the retry comes >= 1000 ms later and succeeds; onRetry sees retryAfterMs 1000", async () => {
    const xyz = [12, 0, 0];
    const run = "ra1";
    const calls = [];
    const tile = await fetchTile(tileUrl(srv, run, xyz, { f: 429, n: 1, ra: 1 }), {
      ...FAST,
      onRetry: (info) => calls.push({ ...info }),
    });
    assertTile(tile, tilePng(...xyz), { attempts: 2 });
    const [t1, t2] = arrivals(keyOf(run, xyz));
    assert.ok(t2 - t1 >= 995, `second request ${Math.round(t2 - t1)} ms after the first`);
    assert.equal(calls.length, 1);
    assert.equal(calls[0].status, 429);
    assert.equal(calls[0].retryAfterMs, 1000);
    assert.ok(calls[0].delayMs >= 1000, `delayMs ${calls[0].delayMs}`);
  });

  test("429 ra=date:2 (HTTP-date): the floor is respected (>= ~1000 ms at 1 s resolution)", async () => {
    const xyz = [12, 0, 1];
    const run = "radate";
    const calls = [];
    const tile = await fetchTile(tileUrl(srv, run, xyz, { f: 429, n: 1, ra: "date:2" }), {
      ...FAST,
      onRetry: (info) => calls.push({ ...info }),
    });
    assertTile(tile, tilePng(...xyz), { attempts: 2 });
    const [t1, t2] = arrivals(keyOf(run, xyz));
    assert.ok(t2 - t1 >= 990, `second request ${Math.round(t2 - t1)} ms after the first`);
    assert.ok(t2 - t1 < 3500, `second request ${Math.round(t2 - t1)} ms after the first`);
    assert.equal(calls.length, 1);
    assert.ok(calls[0].retryAfterMs >= 1000 && calls[0].retryAfterMs <= 3000, `retryAfterMs ${calls[0].retryAfterMs}`);
  });

  test("503 with Retry-After is honoured too", async () => {
    const xyz = [12, 0, 2];
    const run = "ra503";
    const tile = await fetchTile(tileUrl(srv, run, xyz, { f: 503, n: 1, ra: 1 }), FAST);
    assertTile(tile, tilePng(...xyz), { attempts: 2 });
    const [t1, t2] = arrivals(keyOf(run, xyz));
    assert.ok(t2 - t1 >= 995, `second request ${Math.round(t2 - t1)} ms after the first`);
  });

  test("429 ra=86400 with deadlineMs 3000: rejects at once as rate-limited, one request", async () => {
    const xyz = [12, 0, 3];
    const run = "ra-day";
    const elapsed = stopwatch();
    const err = await rejection(() => fetchTile(tileUrl(srv, run, xyz, { f: 429, ra: 86400 }), { ...FAST, deadlineMs: 3000 }), TileError);
    const wall = elapsed();
    assert.equal(err.kind, "rate-limited", err.message);
    assert.ok(wall < 500, `rejected after ${Math.round(wall)} ms`);
    assert.ok(err.elapsedMs < 500, `elapsedMs ${err.elapsedMs}`);
    assert.equal(err.status, 429);
    assert.equal(err.attempts, 1);
    assert.equal(typeof err.retryAfterMs, "number");
    assert.ok(err.retryAfterMs >= 3000, `retryAfterMs ${err.retryAfterMs}`);
    await sleep(300);
    assert.equal(srv.requests(keyOf(run, xyz)), 1);
  });
});

describe("timeouts and the deadline", { concurrency: true }, () => {
  test("hang, attemptTimeoutMs 300, deadlineMs 1000: rejects deadline (cause timeout); nothing left in flight", async () => {
    const xyz = [13, 0, 0];
    const run = "hang";
    const key = keyOf(run, xyz);
    const elapsed = stopwatch();
    const ref = referenceTimer(1000);
    const err = await rejection(() => fetchTile(tileUrl(srv, run, xyz, { f: "hang" }), { ...FAST, attemptTimeoutMs: 300, deadlineMs: 1000 }), TileError);
    const wall = elapsed();
    const late = ref.late(performance.now());
    assert.equal(err.kind, "deadline", err.message);
    assert.ok(err.cause, "deadline carries the last failure as cause");
    assert.equal(err.cause.kind, "timeout", err.cause.message);
    assert.ok(late <= 50, `rejected after ${Math.round(wall)} ms, ${Math.round(late)} ms after a 1000 ms timer`);
    assert.ok(err.attempts >= 2, `attempts ${err.attempts}`);
    const requests = srv.requests(key);
    assert.ok(requests >= 2);
    assert.ok(
      await waitFor(() => srv.aborted(key) === srv.requests(key), { timeout: 1000 }),
      `aborted ${srv.aborted(key)} of ${srv.requests(key)} requests: an attempt was left in flight`,
    );
    await sleep(200);
    assert.equal(srv.requests(key), requests, "no request after the rejection");
  });

  test("503 always, deadlineMs 700: rejects deadline when a 700 ms timer fires (±50 ms)", async () => {
    const xyz = [13, 0, 1];
    const run = "deadline";
    const elapsed = stopwatch();
    const ref = referenceTimer(700);
    const err = await rejection(
      // The breaker (10 failures by default) would end this call first: this test is the deadline's.
      () =>
        new TileClient({ breaker: { failureThreshold: 1000 } }).fetchTile(tileUrl(srv, run, xyz, { f: 503 }), {
          baseDelayMs: 20,
          maxDelayMs: 200,
          deadlineMs: 700,
        }),
      TileError,
    );
    const wall = elapsed();
    const late = ref.late(performance.now());
    assert.equal(err.kind, "deadline", err.message);
    assert.ok(late <= 50, `wall ${Math.round(wall)} ms, ${Math.round(late)} ms after a 700 ms timer`);
    assert.ok(err.attempts >= 2, `attempts ${err.attempts}`);
    assert.equal(err.cause?.kind, "http");
    assert.equal(err.cause?.status, 503);
    // The last attempt was cut short by the deadline: it may reach the server after the
    // rejection (it left before). Every request the server sees is one the call counted.
    const key = keyOf(run, xyz);
    await waitFor(() => srv.requests(key) >= err.attempts, { timeout: 100 });
    const n = srv.requests(key);
    assert.ok(n <= err.attempts, `${n} requests, ${err.attempts} attempts`);
    await sleep(300);
    assert.equal(srv.requests(key), n, "no request after the rejection");
  });

  test("a slow tile under attemptTimeoutMs is delivered (delay 300, attemptTimeoutMs 2000)", async () => {
    const xyz = [13, 0, 2];
    const tile = await fetchTile(tileUrl(srv, "slow-ok", xyz, { delay: 300 }), { ...FAST, attemptTimeoutMs: 2000 });
    assertTile(tile, tilePng(...xyz), { attempts: 1 });
    assert.ok(tile.elapsedMs >= 290, `elapsedMs ${tile.elapsedMs}`);
  });

  test("heavy tail (slowp=1 slowms=1500) with attemptTimeoutMs 400, deadlineMs 900: deadline, cause timeout", async () => {
    const xyz = [13, 0, 3];
    const run = "tail";
    const err = await rejection(
      () => fetchTile(tileUrl(srv, run, xyz, { slowp: 1, slowms: 1500 }), { ...FAST, attemptTimeoutMs: 400, deadlineMs: 900 }),
      TileError,
    );
    assert.equal(err.kind, "deadline", err.message);
    assert.equal(err.cause?.kind, "timeout");
    const key = keyOf(run, xyz);
    assert.ok(await waitFor(() => srv.aborted(key) === srv.requests(key), { timeout: 1000 }));
  });
});

// The module's timers share one platform timer, set for the soonest (src/web/effects.rs).
describe("the module's timers", { concurrency: true }, () => {
  test("calls whose deadlines come soonest last each end at their own, none early", async () => {
    const client = new TileClient();
    const deadlines = [900, 600, 300];
    const ends = await Promise.all(
      deadlines.map(async (deadlineMs, i) => {
        const xyz = [13, 1, i];
        const elapsed = stopwatch();
        const ref = referenceTimer(deadlineMs);
        const err = await rejection(
          () => client.fetchTile(tileUrl(srv, "timers-order", xyz, { f: "hang" }), { ...FAST, attemptTimeoutMs: 5000, deadlineMs }),
          TileError,
        );
        return { deadlineMs, kind: err.kind, wall: elapsed(), late: ref.late(performance.now()) };
      }),
    );
    for (const { deadlineMs, kind, wall, late } of ends) {
      assert.equal(kind, "deadline");
      assert.ok(wall >= deadlineMs - 1, `deadline ${deadlineMs} ms: rejected after ${wall.toFixed(1)} ms`);
      assert.ok(late <= 50, `deadline ${deadlineMs} ms: ${Math.round(late)} ms after a timer of the same length`);
    }
  });

  test("no timer is left once the calls have settled: Node exits at once", async () => {
    // Long timers only (a 20 s attempt timeout, no hedge's delay): one left set would keep the
    // process alive for 20 s after its last call.
    const script = `
      import { fetchTile, TileClient } from ${JSON.stringify(new URL("../../pkg/node.js", import.meta.url).href)};
      const options = { attemptTimeoutMs: 20000, deadlineMs: 25000, hedge: "off" };
      const aborted = new AbortController();
      await Promise.allSettled([
        fetchTile(${JSON.stringify(tileUrl(srv, "timers-exit", [13, 2, 0]))}, options),
        new TileClient().fetchTile(${JSON.stringify(tileUrl(srv, "timers-exit", [13, 2, 1], { f: "hang" }))}, { ...options, signal: aborted.signal }),
        new Promise((resolve) => setTimeout(resolve, 100)).then(() => aborted.abort()),
      ]);
      console.log(performance.timeOrigin + performance.now());
    `;
    const { execFile } = await import("node:child_process");
    const settledAt = await new Promise((resolve, reject) =>
      execFile(process.execPath, ["--input-type=module", "-e", script], { timeout: 10000 }, (error, stdout) =>
        error ? reject(new Error(`the process did not exit on its own within 10 s of its start (${error.message})`)) : resolve(Number(stdout.trim())),
      ),
    );
    const exitedAfter = performance.timeOrigin + performance.now() - settledAt;
    assert.ok(exitedAfter < 1500, `the process exited ${Math.round(exitedAfter)} ms after its calls settled`);
  });
});

describe("AbortSignal", { concurrency: true }, () => {
  test("abort during a backoff sleep: rejects aborted within one timer tick, no further request", async () => {
    const xyz = [14, 0, 0];
    const run = "abort-sleep";
    const ac = new AbortController();
    let abortedAt = 0;
    let retries = 0;
    const p = fetchTile(tileUrl(srv, run, xyz, { f: 503 }), {
      baseDelayMs: 2000,
      maxDelayMs: 2000,
      jitter: "none",
      deadlineMs: 10000,
      signal: ac.signal,
      onRetry: () => {
        retries++;
        setTimeout(() => {
          abortedAt = performance.now();
          ac.abort();
          tick = timerTick();
        }, 100);
      },
    });
    let tick = null;
    let late = null;
    p.catch(() => (late = tick?.fired()));
    const err = await rejection(() => p, TileError);
    const lag = performance.now() - abortedAt;
    assert.ok(abortedAt > 0, "rejected before abort() was called");
    assert.equal(err.kind, "aborted", err.message);
    assert.equal(late, false, `rejected after a setTimeout(0) scheduled at abort() (${lag.toFixed(1)} ms)`);
    assert.equal(retries, 1);
    assert.equal(err.attempts, 1);
    await sleep(2500);
    assert.equal(srv.requests(keyOf(run, xyz)), 1, "the sleep was cancelled: no second request");
  });

  test("already-aborted signal: rejects aborted, no request at all", async () => {
    const xyz = [14, 0, 1];
    const run = "abort-before";
    const ac = new AbortController();
    ac.abort();
    const err = await rejection(() => fetchTile(tileUrl(srv, run, xyz), { ...FAST, signal: ac.signal }), TileError);
    assert.equal(err.kind, "aborted", err.message);
    await sleep(100);
    assert.equal(srv.requests(keyOf(run, xyz)), 0);
  });

  test("abort while the request is in flight (hang): rejects aborted quickly; server sees the abort", async () => {
    const xyz = [14, 0, 2];
    const run = "abort-flight";
    const key = keyOf(run, xyz);
    const ac = new AbortController();
    const p = fetchTile(tileUrl(srv, run, xyz, { f: "hang" }), { ...FAST, signal: ac.signal });
    p.catch(() => {}); // handled below; avoid an unhandled-rejection warning meanwhile
    assert.ok(await waitFor(() => srv.requests(key) === 1), "request reached the server");
    const abortedAt = performance.now();
    ac.abort();
    const tick = timerTick();
    let late = null;
    p.catch(() => (late = tick.fired()));
    const err = await rejection(() => p, TileError);
    const lag = performance.now() - abortedAt;
    assert.equal(err.kind, "aborted", err.message);
    assert.equal(late, false, `rejected after a setTimeout(0) scheduled at abort() (${lag.toFixed(1)} ms)`);
    assert.ok(await waitFor(() => srv.aborted(key) === 1, { timeout: 1000 }), "server counted the abort");
    await sleep(200);
    assert.equal(srv.requests(key), 1);
  });

  test("abort with a reason: still kind aborted", async () => {
    const xyz = [14, 0, 3];
    const ac = new AbortController();
    const p = fetchTile(tileUrl(srv, "abort-reason", xyz, { f: "hang" }), { ...FAST, signal: ac.signal });
    p.catch(() => {});
    await waitFor(() => srv.requests(keyOf("abort-reason", xyz)) === 1);
    ac.abort(new Error("user panned away"));
    const err = await rejection(() => p, TileError);
    assert.equal(err.kind, "aborted", err.message);
  });

  test("AbortSignal.timeout works as a signal", async () => {
    const xyz = [14, 0, 4];
    const elapsed = stopwatch();
    const err = await rejection(() => fetchTile(tileUrl(srv, "abort-timeout", xyz, { f: "hang" }), { ...FAST, signal: AbortSignal.timeout(200) }), TileError);
    assert.equal(err.kind, "aborted", err.message);
    assert.ok(elapsed() < 600);
  });
});

// The jitter's generator is seeded once per module from crypto.getRandomValues (getrandom): its
// draws must spread over the whole range, call after call (a constant or stuck generator would
// make every client retry in step).
describe("the jitter's randomness", () => {
  test("twenty retries' full-jitter delays are twenty different numbers in [0, baseDelayMs)", async () => {
    const client = new TileClient();
    try {
      const delays = [];
      for (let i = 0; i < 20; i++) {
        const url = tileUrl(srv, "jitter-spread", [4, i, 1], { f: 503, n: 1 });
        await client.fetchTile(url, { baseDelayMs: 10, maxDelayMs: 10, onRetry: (info) => delays.push(info.delayMs) });
      }
      assert.equal(delays.length, 20);
      assert.ok(
        delays.every((d) => d >= 0 && d < 10),
        `within the ceiling: ${delays}`,
      );
      assert.equal(new Set(delays).size, 20, `all different: ${delays}`);
      const mean = delays.reduce((a, b) => a + b, 0) / delays.length;
      assert.ok(mean > 2 && mean < 8, `spread around the middle: mean ${mean}`);
    } finally {
      client.free();
    }
  });
});
