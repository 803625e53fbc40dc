// fetchTile against real map servers installed from the registries (scripts/setup.sh): MapProxy
// 7.0.0 (PyPI, its `debug` source) and MapServer 8.0 (Debian, CGI behind cgi.mjs), each behind
// a counting front proxy (front-proxy.mjs) on loopback. Every case of cases.mjs, with the
// verdict kept next to what the server sends; then the mixed map view: good tiles and tiles of a
// mistyped layer on one host at once. Runs against the BUILT package (pkg/node.js).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { TileClient, TileError } from "../../pkg/node.js";
import { MAPPROXY_CASES, MAPSERVER_CASES, caseUrl } from "./cases.mjs";
import { startFrontProxy } from "./front-proxy.mjs";
import { startMapProxy } from "./mapproxy/server.mjs";
import { startMapServer } from "./mapserver/cgi.mjs";

// The options of an image layer (an `accept` says what a tile is: without one, a 200 text/plain
// or JSON body could be a tile format). A retried case gets a deadline short enough that it ends
// within a few seconds with several attempts; a tile or a refusal, one answer, gets a long one:
// under the suite's load a CGI answer alone has taken over a second.
// No hedges: a case checks the verdict on each answer by the requests it cost, and a tile slower
// than the cold hedge delay (1 s) would be sent twice.
const OPTIONS = { accept: "image/*", baseDelayMs: 10, maxDelayMs: 40, hedge: "off" };
const deadlineMs = (outcome) => (outcome === "retry" ? 2500 : 6000);
// Per case, a client whose breaker and retry budget never end a retried call before its
// deadline: what is checked is the verdict on the server's answer (the mixed view below uses
// the defaults).
const CLIENT = { breaker: { failureThreshold: 100000 }, retryBudget: { ratio: 1, minPerSecond: 100000 } };

/** Runs one case through `front` and checks its verdict and the requests that reached the server. */
async function check(c, front, direct) {
  const url = caseUrl(front.url, c);
  // `/x?` reaches the server as `/x`.
  const sent = () => front.count((r) => r.url === c.path || `${r.url}?` === c.path);
  const before = sent();
  const reasons = []; // why each failed attempt was retried
  let tile;
  let error;
  try {
    tile = await new TileClient(CLIENT).fetchTile(url, { ...OPTIONS, deadlineMs: deadlineMs(c.expect.outcome), onRetry: (info) => reasons.push(info.reason) });
  } catch (e) {
    error = e;
  }
  const requests = sent() - before;
  const e = c.expect;
  const seen = error ? `${error.kind}: ${error.message}` : `a tile of ${tile.data.length} B`;
  if (e.outcome === "tile") {
    assert.ok(tile, `expected a tile, got ${seen}`);
    const truth = new Uint8Array(await (await fetch(caseUrl(direct, c))).arrayBuffer());
    assert.deepEqual(tile.data, truth, "the bytes of a direct fetch");
    assert.equal(requests, 1);
    return `tile, ${tile.data.length} B, 1 request`;
  }
  assert.ok(error instanceof TileError, `expected a TileError, got ${seen}`);
  const exceptionOf = (err) => ({ code: err.exceptionCode ?? null, text: err.exceptionText ?? null });
  if (e.outcome === "reject") {
    assert.equal(error.kind, e.kind, seen);
    assert.equal(requests, 1, `${seen}: one request`);
    if (e.status !== undefined) assert.equal(error.status, e.status);
    if (e.exceptionCode !== undefined) assert.equal(exceptionOf(error).code, e.exceptionCode, seen);
    if (e.exceptionText !== undefined) assert.equal(exceptionOf(error).text, e.exceptionText, seen);
    if (error.exceptionCode) assert.ok(error.message.includes(error.exceptionCode), "the message shows the code");
    return `${error.kind}${error.exceptionCode ? ` ${error.exceptionCode}` : ""}, 1 request`;
  }
  assert.equal(e.outcome, "retry");
  assert.equal(error.kind, "deadline", seen);
  assert.ok(requests >= 2, `${seen}: retried (${requests} requests)`);
  assert.equal(reasons[0], e.causeKind, `${seen}: why the first attempt was retried`);
  assert.ok(error.cause instanceof TileError, "the last failure is the cause");
  // The last attempt may have been cut by the deadline (a timeout); any other is the server's.
  if (error.cause.kind !== "timeout") {
    assert.equal(error.cause.kind, e.causeKind, seen);
    if (e.exceptionCode !== undefined) assert.equal(exceptionOf(error.cause).code, e.exceptionCode, seen);
  }
  return `deadline after ${requests} requests, retried as ${reasons[0]}${error.cause.exceptionCode ? ` (${error.cause.exceptionCode})` : ""}`;
}

/** The cases of one server as tests, a few at a time (mapserv is one process per request). */
function suite(name, cases, start) {
  describe(name, { concurrency: 4 }, () => {
    let server;
    let front;
    before(async () => {
      server = await start();
      front = await startFrontProxy(server.url);
      // One tile straight from the server, not counted: the first requests to a cold server
      // (mapserv loads its libraries in a new process per request) took over a second on a
      // loaded machine, four cases at once.
      const tile = cases.find((c) => c.expect.outcome === "tile");
      await (await fetch(caseUrl(server.url, tile))).arrayBuffer();
    });
    after(async () => {
      await front?.stop();
      await server?.stop();
    });
    test("every case has its own path (requests are counted by path)", () => {
      assert.equal(new Set(cases.map((c) => c.path)).size, cases.length);
    });
    for (const c of cases) {
      test(c.name, async (t) => {
        const sends = c.sends;
        t.diagnostic(
          `server sends ${sends.status} ${sends.type}${sends.report ? ` report ${sends.code ?? "(no code)"}` : ""} → ${await check(c, front, server.url)}`,
        );
      });
    }
  });
}

suite("MapProxy 7.0.0", MAPPROXY_CASES, () => startMapProxy());
suite("MapServer 8.0", MAPSERVER_CASES, () => startMapServer());

// z/x/y of web mercator as a WMS BBOX.
function bbox(z, x, y) {
  const size = (2 * 20037508.342789244) / 2 ** z;
  const minx = -20037508.342789244 + x * size;
  const maxy = 20037508.342789244 - y * size;
  return [minx, maxy - size, minx + size, maxy].join(",");
}

describe("a map view with a mistyped layer on the same MapProxy", () => {
  let server;
  let front;
  before(async () => {
    server = await startMapProxy();
    front = await startFrontProxy(server.url);
  });
  after(async () => {
    await front?.stop();
    await server?.stop();
  });

  test("each bad tile costs one request, the good tiles one each, and the breaker stays closed", async (t) => {
    const events = [];
    // The default config (breaker, budget and pause all on), with an observer; no hedges: on a
    // loaded machine a tile slower than the host's p95 gets one, a request more than the count.
    const client = new TileClient({ hedge: "off", onEvent: (e) => events.push(e) });
    const url = (layers, z, x, y) =>
      `${front.url}/service?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetMap&LAYERS=${layers}&STYLES=&CRS=EPSG:3857&BBOX=${bbox(z, x, y)}&WIDTH=256&HEIGHT=256&FORMAT=image/png`;
    const tiles = [];
    for (let x = 0; x < 4; x++) for (let y = 0; y < 3; y++) tiles.push([2, x, y]);
    let failures = 0;
    for (const view of [1, 2]) {
      front.reset();
      const goodUrls = tiles.map(([z, x, y]) => url("osm", z, x + 4 * (view - 1), y));
      const good = goodUrls.map((u) => client.fetchTile(u));
      const bad = tiles.map(([z, x, y]) => client.fetchTile(url("osmm", z, x + 4 * (view - 1), y)));
      const [goodOut, badOut] = await Promise.all([Promise.allSettled(good), Promise.allSettled(bad)]);
      // A good tile asked twice must owe it to the server: an earlier request of its URL that
      // failed there (a real server under a loaded machine may), never to the bad tiles beside it.
      const goodUrl = (r) => r.url.includes("LAYERS=osm&");
      const failedThere = (r) => !r.clientGone && r.status >= 500;
      const serverFailed = front.requests.filter((r) => goodUrl(r) && failedThere(r));
      failures += serverFailed.length;
      for (const [i, out] of goodOut.entries()) {
        assert.equal(out.status, "fulfilled", `a good tile failed: ${out.reason?.message}`);
        if (out.value.attempts !== 1) {
          const asked = front.requests.filter((r) => goodUrls[i].endsWith(r.url));
          t.diagnostic(
            `a good tile took ${out.value.attempts} attempts: ${JSON.stringify(asked.map((r) => [r.status, r.upstreamStatus]))}; MapProxy stderr: ${server.stderr.slice(-600)}`,
          );
          assert.ok(asked.length === out.value.attempts && asked.slice(0, -1).every(failedThere), "a good tile retried only after the server failed it");
        }
      }
      for (const out of badOut) {
        assert.equal(out.status, "rejected");
        assert.equal(out.reason.kind, "service-exception");
        assert.equal(out.reason.exceptionCode, "LayerNotDefined");
        assert.equal(out.reason.status, 500, "MapProxy's status for WMS exceptions");
      }
      // When it fails, what each bad tile's requests met and what the client did (a hedge, a
      // retry after a failure of the server): the next failure says which.
      const badRequests = front.requests.filter((r) => r.url.includes("LAYERS=osmm"));
      assert.equal(
        badRequests.length,
        12,
        `one request per bad tile: ${JSON.stringify(badRequests.map((r) => [r.url.match(/BBOX=([^&]*)/)?.[1], r.status, r.upstreamStatus, r.clientGone]))}; ` +
          `attempts per bad tile ${badOut.map((o) => o.reason?.attempts).join(" ")}; hedges ${events.filter((e) => e.type === "hedge").length}; ` +
          `the client's host: ${JSON.stringify(Object.values(client.stats())[0])}`,
      );
      assert.equal(front.count(goodUrl), 12 + serverFailed.length, "one request per good tile, and one per failure of the server");
      const elapsed = goodOut.map((o) => o.value.elapsedMs).sort((a, b) => a - b);
      t.diagnostic(
        `view ${view}: 12 good tiles (elapsed ${elapsed[0].toFixed(0)}–${elapsed[11].toFixed(0)} ms), 12 bad tiles (LayerNotDefined), ${front.requests.length} requests`,
      );
    }
    const host = Object.values(client.stats())[0];
    assert.equal(host.breaker.state, "closed");
    assert.equal(host.retries, failures, "retried only what the server failed");
    assert.equal(host.pausedUntil, null);
    const held = events.filter((e) => e.type === "breaker" || e.type === "pause" || (e.type === "queue" && e.hold !== "slot"));
    assert.deepEqual(held, [], "no call was held back by the breaker, a pause or the rate");
  });
});
