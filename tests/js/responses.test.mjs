// fetchTile against the fault server: delivery, retries, and how each kind of bad response ends.
// Runs against the BUILT package (pkg/node.js): build it first.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { TileClient, TileError } from "../../pkg/node.js";

// Each call on a client of its own: these tests are about one call's retries, and what calls to
// a host share (a pause, the breaker, the budget) is tested in client.test.mjs.
const fetchTile = (url, options) => new TileClient().fetchTile(url, options);
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { FAST, tileUrl, keyOf, rejection, assertTile, describeTile, sleep, stopwatch } from "./helpers.mjs";

let srv;
before(async () => {
  srv = await startFaultServer({ seed: 1 });
  await (await fetch(`${srv.url}/health`)).text(); // warm up the platform's fetch
});
after(async () => {
  await srv?.close();
});

describe("delivery", { concurrency: true }, () => {
  test("a healthy tile: shape of the Tile object", async () => {
    const xyz = [3, 1, 2];
    const elapsed = stopwatch();
    const tile = await fetchTile(tileUrl(srv, "ok", xyz));
    const wall = elapsed();
    assertTile(tile, tilePng(...xyz), { attempts: 1 });
    assert.equal(tile.contentType, "image/png");
    assert.ok(tile.headers instanceof Headers, "headers is a Headers");
    assert.equal(tile.headers.get("content-type"), "image/png");
    assert.equal(tile.headers.get("x-fault-attempt"), "1");
    assert.ok(tile.elapsedMs <= wall + 5, `elapsedMs ${tile.elapsedMs} <= wall ${wall}`);
    assert.equal(srv.requests(keyOf("ok", xyz)), 1);
  });

  test("flaky 503 (p=0.3) over 50 tiles fetched concurrently: every tile delivered intact", async () => {
    const run = "flaky";
    const coords = [];
    for (let x = 0; x < 10; x++) for (let y = 0; y < 5; y++) coords.push([6, x, y]);
    for (const xyz of coords) tilePng(...xyz); // build (and cache) the PNGs before the clock matters
    const tiles = await Promise.all(coords.map((xyz) => fetchTile(tileUrl(srv, run, xyz, { f: 503, p: 0.3 }), { ...FAST, deadlineMs: 15000 })));
    let total = 0;
    let retried = 0;
    tiles.forEach((tile, i) => {
      const xyz = coords[i];
      assertTile(tile, tilePng(...xyz));
      assert.equal(tile.attempts, srv.requests(keyOf(run, xyz)), `attempts of ${xyz} equal the server's count`);
      total += tile.attempts;
      if (tile.attempts > 1) retried++;
    });
    assert.equal(srv.requests(run), total, "server requests == sum of attempts");
    assert.ok(retried > 0, "with p=0.3 some tiles needed a retry");
    assert.equal(srv.aborted(run), 0);
    console.log(`# flaky: 50 tiles, ${total} requests, ${retried} retried`);
  });

  test("503 n=2: resolves on attempt 3; onRetry called twice with its fields", async () => {
    const xyz = [4, 2, 2];
    const calls = [];
    const tile = await fetchTile(tileUrl(srv, "n2", xyz, { f: 503, n: 2 }), {
      ...FAST,
      onRetry: (info) => calls.push({ ...info }),
    });
    assertTile(tile, tilePng(...xyz), { attempts: 3 });
    assert.equal(srv.requests(keyOf("n2", xyz)), 3);
    assert.equal(calls.length, 2, JSON.stringify(calls));
    for (const c of calls) {
      assert.equal(typeof c.attempt, "number");
      assert.equal(typeof c.delayMs, "number");
      assert.ok(c.delayMs >= 0 && c.delayMs <= FAST.maxDelayMs, `delayMs ${c.delayMs}`);
      assert.equal(typeof c.reason, "string");
      assert.ok(c.reason.length > 0);
      assert.equal(c.status, 503);
      assert.ok(c.retryAfterMs === undefined || c.retryAfterMs === null, `no Retry-After sent, got ${c.retryAfterMs}`);
    }
    assert.equal(calls[1].attempt, calls[0].attempt + 1);
    assert.ok(calls[0].attempt === 1 || calls[0].attempt === 2, `first onRetry attempt ${calls[0].attempt}`);
  });

  test("onRetry that throws does not break the retry loop", async () => {
    const xyz = [4, 2, 3];
    const tile = await fetchTile(tileUrl(srv, "throwing-onretry", xyz, { f: 500, n: 1 }), {
      ...FAST,
      onRetry: () => {
        throw new Error("listener bug");
      },
    });
    assertTile(tile, tilePng(...xyz), { attempts: 2 });
  });

  for (const code of [500, 502, 504, 408]) {
    test(`${code} n=1 is retried`, async () => {
      const xyz = [5, code % 32, 1];
      const tile = await fetchTile(tileUrl(srv, `s${code}`, xyz, { f: code, n: 1 }), FAST);
      assertTile(tile, tilePng(...xyz), { attempts: 2 });
    });
  }

  for (const fault of ["reset", "truncate", "shortlen"]) {
    test(`${fault} n=1: succeeds on attempt 2 with the right bytes`, async () => {
      const xyz = [8, 100, { reset: 1, truncate: 2, shortlen: 3 }[fault]];
      const tile = await fetchTile(tileUrl(srv, fault, xyz, { f: fault, n: 1 }), FAST);
      assertTile(tile, tilePng(...xyz), { attempts: 2 });
      assert.equal(srv.requests(keyOf(fault, xyz)), 2);
    });
  }

  test("truncate always: never resolves with half a PNG", async () => {
    const xyz = [8, 100, 9];
    const err = await rejection(() => fetchTile(tileUrl(srv, "truncate-always", xyz, { f: "truncate" }), { ...FAST, deadlineMs: 1000 }), TileError);
    // Every attempt fails, so the call ends at its deadline, or at the host's breaker once ten
    // failures in a row opened it; either way the last failure is the truncated body.
    const kind = ["deadline", "circuit-open"].includes(err.kind) ? err.cause?.kind : err.kind;
    assert.equal(kind, "invalid-response", `kind ${err.kind}, cause ${err.cause?.kind}: ${err.message}`);
  });

  test("gzip: decoded by the platform, bytes equal the PNG", async () => {
    const xyz = [2, 2, 2];
    const tile = await fetchTile(tileUrl(srv, "gzip", xyz, { f: "gzip" }), FAST);
    assertTile(tile, tilePng(...xyz), { attempts: 1 });
  });

  test("204: resolves empty with no data", async () => {
    const xyz = [9, 1, 1];
    const tile = await fetchTile(tileUrl(srv, "nocontent", xyz, { f: 204 }), FAST);
    assert.equal(tile.empty, true);
    assert.equal(tile.status, 204);
    assert.ok(tile.data instanceof Uint8Array);
    assert.equal(tile.data.length, 0);
    assert.equal(tile.attempts, 1);
    assert.equal(srv.requests(keyOf("nocontent", xyz)), 1);
  });

  test("emptyOn: [404] turns a 404 into an empty tile", async () => {
    const xyz = [9, 1, 2];
    const tile = await fetchTile(tileUrl(srv, "empty404", xyz, { f: 404 }), { ...FAST, emptyOn: [404] });
    assert.equal(tile.empty, true);
    assert.equal(tile.status, 404);
    assert.equal(tile.data.length, 0);
  });

  for (const code of [404, 403, 400, 410]) {
    test(`${code}: rejects kind "http" at once, one request`, async () => {
      const xyz = [10, code, 0];
      const run = `perm${code}`;
      const err = await rejection(() => fetchTile(tileUrl(srv, run, xyz, { f: code }), FAST), TileError);
      assert.equal(err.kind, "http", err.message);
      assert.equal(err.status, code);
      assert.equal(err.attempts, 1);
      assert.equal(typeof err.elapsedMs, "number");
      assert.ok(err.url.includes(`/tile/10/${code}/0.png`), err.url);
      await sleep(100);
      assert.equal(srv.requests(keyOf(run, xyz)), 1);
    });
  }

  test("retryOn: [404] makes a 404 retried", async () => {
    const xyz = [10, 1, 1];
    const tile = await fetchTile(tileUrl(srv, "retry404", xyz, { f: 404, n: 1 }), { ...FAST, retryOn: [404] });
    assertTile(tile, tilePng(...xyz), { attempts: 2 });
  });
});

describe("bodies that are not tiles", { concurrency: true }, () => {
  test("sexml (NoApplicableCode) n=1: retried, attempt 2 succeeds", async () => {
    const xyz = [11, 0, 0];
    const tile = await fetchTile(tileUrl(srv, "sexml1", xyz, { f: "sexml", n: 1 }), FAST);
    assertTile(tile, tilePng(...xyz), { attempts: 2 });
  });

  test("sexml code=InvalidParameterValue: rejects service-exception after one request", async () => {
    const xyz = [11, 0, 1];
    const run = "sexml-perm";
    const err = await rejection(() => fetchTile(tileUrl(srv, run, xyz, { f: "sexml", code: "InvalidParameterValue" }), FAST), TileError);
    assert.equal(err.kind, "service-exception", err.message);
    assert.equal(err.attempts, 1);
    assert.match(err.message, /InvalidParameterValue/);
    await sleep(100);
    assert.equal(srv.requests(keyOf(run, xyz)), 1);
  });

  test("owsxml code=TileOutOfRange: rejects service-exception after one request", async () => {
    const xyz = [11, 0, 2];
    const run = "ows-perm";
    const err = await rejection(() => fetchTile(tileUrl(srv, run, xyz, { f: "owsxml", code: "TileOutOfRange" }), FAST), TileError);
    assert.equal(err.kind, "service-exception", err.message);
    assert.equal(err.attempts, 1);
    assert.match(err.message, /TileOutOfRange/);
    await sleep(100);
    assert.equal(srv.requests(keyOf(run, xyz)), 1);
  });

  test("html n=1: retried, attempt 2 succeeds", async () => {
    const xyz = [11, 1, 0];
    const tile = await fetchTile(tileUrl(srv, "html1", xyz, { f: "html", n: 1 }), FAST);
    assertTile(tile, tilePng(...xyz), { attempts: 2 });
  });

  test("html always: rejects, never resolves with HTML", async () => {
    const xyz = [11, 1, 1];
    const err = await rejection(() => fetchTile(tileUrl(srv, "html-always", xyz, { f: "html" }), { ...FAST, deadlineMs: 600 }), TileError);
    if (err.kind === "deadline" || err.kind === "circuit-open") {
      assert.ok(err.cause, `${err.kind} carries the last failure as cause`);
      assert.equal(err.cause.kind, "invalid-response", err.cause.message);
    } else {
      assert.equal(err.kind, "invalid-response", err.message);
    }
    assert.ok(srv.requests(keyOf("html-always", xyz)) >= 2, "HTML is retried");
  });

  test('accept "image/*" with a JSON body n=1: retried, attempt 2 succeeds; Accept is sent', async () => {
    const xyz = [11, 2, 0];
    const run = "accept";
    const tile = await fetchTile(tileUrl(srv, run, xyz, { f: "json", n: 1 }), { ...FAST, accept: "image/*" });
    assertTile(tile, tilePng(...xyz), { attempts: 2 });
    const sent = srv.log.filter((e) => e.key === keyOf(run, xyz));
    assert.equal(sent.length, 2);
    for (const e of sent) assert.equal(e.headers.accept, "image/*");
  });

  test("custom headers are sent", async () => {
    const xyz = [11, 2, 1];
    const run = "headers";
    const tile = await fetchTile(tileUrl(srv, run, xyz), { ...FAST, headers: { "X-Tilefetch-Test": "yes" } });
    assertTile(tile, tilePng(...xyz), { attempts: 1 });
    const [e] = srv.log.filter((x) => x.key === keyOf(run, xyz));
    assert.equal(e.headers["x-tilefetch-test"], "yes");
  });

  test("json without accept: delivered as is (no accept option = no content-type check)", async () => {
    const xyz = [11, 2, 2];
    const tile = await fetchTile(tileUrl(srv, "json-noaccept", xyz, { f: "json" }), FAST);
    assert.equal(tile.status, 200);
    assert.equal(tile.attempts, 1);
    assert.equal(tile.contentType, "application/json", describeTile(tile));
    assert.equal(Buffer.from(tile.data).toString(), '{"error":"quota"}');
  });
});
