// Shared helpers of the tests/js suites (not a test file itself).
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Polls `pred` until it is truthy or `timeout` ms pass; returns its last value. */
export async function waitFor(pred, { timeout = 2000, step = 5 } = {}) {
  const end = performance.now() + timeout;
  for (;;) {
    const v = await pred();
    if (v || performance.now() >= end) return v;
    await sleep(step);
  }
}

/** `${srv.url}/tile/z/x/y.png?run=...&<params>` */
export function tileUrl(srv, run, [z, x, y], params = {}) {
  const q = new URLSearchParams({ run, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])) });
  return `${srv.url}/tile/${z}/${x}/${y}.png?${q}`;
}

export const keyOf = (run, [z, x, y]) => `${run}/${z}/${x}/${y}`;

/** Small delays so retry tests stay fast. */
export const FAST = Object.freeze({ baseDelayMs: 10, maxDelayMs: 40 });

/**
 * Calls `fn` (which must return a promise, not throw synchronously), awaits it and returns the
 * rejection, asserting it is a TileError. Fails if it resolves.
 */
export async function rejection(fn, TileError, what = "fetchTile") {
  let p;
  try {
    p = fn();
  } catch (e) {
    assert.fail(`${what} threw synchronously instead of returning a rejected promise: ${e?.stack ?? e}`);
  }
  assert.ok(p && typeof p.then === "function", `${what} must return a promise`);
  let value;
  try {
    value = await p;
  } catch (err) {
    assert.ok(err instanceof TileError, `expected a TileError, got ${err?.stack ?? err}`);
    assert.ok(err instanceof Error, "TileError extends Error");
    assert.equal(err.name, "TileError");
    assert.equal(typeof err.kind, "string");
    assert.equal(typeof err.message, "string");
    return err;
  }
  assert.fail(`${what} resolved (${describeTile(value)}) but was expected to reject`);
}

export function describeTile(t) {
  if (!t || typeof t !== "object") return String(t);
  const head = t.data ? Buffer.from(t.data.subarray(0, 40)).toString("latin1") : "";
  return `status ${t.status}, ${t.contentType}, ${t.data?.length} bytes, attempts ${t.attempts}, head ${JSON.stringify(head)}`;
}

/** Asserts a delivered tile is exactly `truth` (a Buffer) and has the documented shape. */
export function assertTile(tile, truth, { attempts } = {}) {
  assert.ok(tile && typeof tile === "object", "tile is an object");
  assert.ok(tile.data instanceof Uint8Array, "data is a Uint8Array");
  assert.equal(tile.data.length, truth.length, `length (${describeTile(tile)})`);
  assert.ok(Buffer.from(tile.data.buffer, tile.data.byteOffset, tile.data.byteLength).equals(truth), "bytes equal the truth");
  assert.equal(tile.status, 200);
  assert.equal(tile.empty, false);
  assert.equal(typeof tile.attempts, "number");
  assert.ok(tile.attempts >= 1);
  assert.equal(typeof tile.elapsedMs, "number");
  assert.ok(tile.elapsedMs >= 0);
  if (attempts !== undefined) assert.equal(tile.attempts, attempts, "attempts");
}

/** Wall-clock timer. */
export function stopwatch() {
  const t0 = performance.now();
  return () => performance.now() - t0;
}

/**
 * Starts a one-timer-tick clock: `fired()` turns true once a `setTimeout(0)` scheduled now has
 * run. "Rejected before the tick" is the load-independent form of "rejected at once": a
 * rejection driven by microtasks (an abort listener, a woken queue) beats it on any machine,
 * while one that waits for any timer, poll or network event cannot.
 */
export function timerTick() {
  let done = false;
  setTimeout(() => {
    done = true;
  }, 0);
  return { fired: () => done };
}

/**
 * A reference timer for deadline checks: `late(at)` is how far `at` (a performance.now() time)
 * falls after the moment a `setTimeout(ms)` started now actually ran. Comparing a rejection with
 * a timer of the same length cancels out event-loop lag on a busy machine, so the check tests
 * "stopped at its deadline", not "the machine was idle".
 */
export function referenceTimer(ms) {
  let firedAt = null;
  setTimeout(() => {
    firedAt = performance.now();
  }, ms);
  return {
    late: (at) => (firedAt === null ? 0 : at - firedAt),
  };
}
