// tilefetch/pmtiles in Node: the real `pmtiles` package reading a real archive (written by the
// PyPI `pmtiles` tools) from a loopback static-storage server (tests/pmtiles/archive-server.mjs)
// through PMTilesSource, beside pmtiles' own FetchSource: faults from the header request on, the
// archive replaced mid-read, a server that ignores Range, 416, an S3 error document, coalescing.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { EtagMismatch, FetchSource, PMTiles } from "pmtiles";
import { PMTilesSource } from "../../pkg/pmtiles.js";
import { TileClient, TileError } from "../../pkg/node.js";
import { startArchiveServer } from "../pmtiles/archive-server.mjs";
import { allTiles, makeArchive, readEvery, referenceTiles } from "../pmtiles/archives.mjs";

const FAULTS = "p503=0.2&preset=0.05&pcut=0.05";
const FAST = { baseDelayMs: 20, maxDelayMs: 200 };
let server;
let v0;
let v1;
let tiles0;
let tiles1;
before(async () => {
  v0 = makeArchive({ maxzoom: 4, variant: 0 });
  v1 = makeArchive({ maxzoom: 4, variant: 1 });
  [tiles0, tiles1] = await Promise.all([referenceTiles(v0, 4), referenceTiles(v1, 4)]);
  server = await startArchiveServer({ "a.pmtiles": v0, "b.pmtiles": v0, "small.pmtiles": v0 });
});
after(() => server?.close());

const url = (name, run, query = "") => `${server.url}/${name}?run=${run}${query ? `&${query}` : ""}`;

function assertEveryTile(delivered, reference, label) {
  assert.equal(delivered.size, reference.size, `${label}: ${delivered.size} of ${reference.size} tiles delivered`);
  for (const [key, bytes] of reference) assert.ok(delivered.get(key)?.equals(bytes), `${label}: tile ${key} differs from the archive's`);
}

test("20 % 503, 5 % resets, 5 % cut bodies from the header on: every tile byte-identical, FetchSource beside", async () => {
  for (const seed of [1, 2, 3]) {
    const run = `faults-${seed}`;
    const archive = new PMTiles(new PMTilesSource(url("a.pmtiles", run, `${FAULTS}&seed=${seed}`), { client: new TileClient(FAST) }));
    const { delivered, failed } = await readEvery(archive, 4);
    assert.equal(failed.size, 0, `seed ${seed}: ${[...failed.values()].slice(0, 3).map((e) => e.message)}`);
    assertEveryTile(delivered, tiles0, `seed ${seed}`);
    const faults = server.log.filter((e) => e.run === run && e.fault !== "none").length;
    assert.ok(faults > 30, `seed ${seed}: the server injected ${faults} faults`);
    // The same faults through pmtiles' own source lose tiles: what this source is for.
    const own = await readEvery(new PMTiles(new FetchSource(url("a.pmtiles", `own-${run}`, `${FAULTS}&seed=${seed}`))), 4);
    assert.ok(own.failed.size > 0, `seed ${seed}: FetchSource lost ${own.failed.size}`);
  }
});

test("the header request fails first: every tile still delivered (FetchSource loses all)", async () => {
  const archive = new PMTiles(new PMTilesSource(url("a.pmtiles", "fail-first", "fail=1"), FAST));
  const { delivered } = await readEvery(archive, 4);
  assertEveryTile(delivered, tiles0, "fail-first");
  const own = await readEvery(new PMTiles(new FetchSource(url("a.pmtiles", "own-fail-first", "fail=1"))), 4);
  assert.equal(own.delivered.size, 0);
});

test("healthy: the same requests as FetchSource, each a 206 of the range asked for", async () => {
  const ours = await readEvery(new PMTiles(new PMTilesSource(url("a.pmtiles", "healthy"), { hedge: "off" })), 4);
  const own = await readEvery(new PMTiles(new FetchSource(url("a.pmtiles", "own-healthy"))), 4);
  assertEveryTile(ours.delivered, tiles0, "healthy");
  assertEveryTile(own.delivered, tiles0, "FetchSource");
  assert.equal(server.requests("healthy"), server.requests("own-healthy"));
  assert.ok(server.log.filter((e) => e.run === "healthy").every((e) => e.status === 206 && /^bytes=\d+-\d+$/.test(e.range)));
});

test("the archive replaced mid-read (new ETag): every tile read afterwards is the new archive's", async () => {
  // No hedges: the header's reads are counted, and a hedge is a second request of its range
  // beside the first (a fresh-clone CI of cc89ff4 counted 2 before the replacement).
  const archive = new PMTiles(new PMTilesSource(url("b.pmtiles", "replaced"), { ...FAST, hedge: "off" }));
  const first = allTiles(4).slice(0, 100);
  for (const [z, x, y] of first) assert.ok(Buffer.from((await archive.getZxy(z, x, y)).data).equals(tiles0.get(`${z}/${x}/${y}`)));
  server.replace("b.pmtiles", v1);
  const headerReads = () => server.log.filter((e) => e.run === "replaced" && e.range === "bytes=0-16383").length;
  assert.equal(headerReads(), 1);
  const { delivered, failed } = await readEvery(archive, 4);
  assert.equal(failed.size, 0, [...failed.values()].map((e) => e.message).join("; "));
  assertEveryTile(delivered, tiles1, "after the replacement");
  assert.ok(headerReads() >= 2, "the header was read again once the ETag changed");
  server.replace("b.pmtiles", v0);
});

test("a weak ETag is not compared (as pmtiles does)", async () => {
  const source = new PMTilesSource(url("a.pmtiles", "weak", "weak=1"));
  const read = await source.getBytes(0, 127, undefined, '"another"');
  assert.equal(read.etag, undefined);
  assert.equal(read.data.byteLength, 127);
});

test("a server that ignores Range: a small archive is read; a large one is a clear error after one request", async () => {
  const small = await readEvery(new PMTiles(new PMTilesSource(url("small.pmtiles", "ignored", "ignore=1"))), 4);
  assertEveryTile(small.delivered, tiles0, "ignored Range");
  assert.ok(v0.length > 65_536, `the archive (${v0.length} B) is over the bound set below`);
  const large = new PMTiles(new PMTilesSource(url("small.pmtiles", "ignored-large", "ignore=1"), { maxBytes: 65_536 }));
  const error = await large.getHeader().then(
    () => null,
    (e) => e,
  );
  assert.ok(error instanceof TileError, String(error));
  assert.equal(error.kind, "range-unsupported", error.message);
  assert.match(error.message, /does not serve byte ranges/);
  assert.equal(server.requests("ignored-large"), 1);
});

test("a range past the end (416) is not retried: the archive changed (EtagMismatch), as FetchSource reads it", async () => {
  const source = new PMTilesSource(url("a.pmtiles", "past-end"), FAST);
  const error = await source.getBytes(v0.length + 10, 5).then(
    () => null,
    (e) => e,
  );
  assert.ok(error instanceof EtagMismatch, String(error));
  assert.equal(server.requests("past-end"), 1);
});

test("a client's emptyOn does not turn a missing archive into empty bytes", async () => {
  const source = new PMTilesSource(`${server.url}/missing.pmtiles?run=missing-empty`, { client: new TileClient({ emptyOn: [404] }) });
  const error = await source.getBytes(0, 16384).then(
    () => null,
    (e) => e,
  );
  assert.deepEqual([error?.kind, error?.status], ["http", 404]);
});

test("a range longer than the client's maxBytes is read where its host's rule allows it", async () => {
  const host = new URL(server.url).host;
  const client = new TileClient({ maxBytes: 100, hosts: { [host]: { maxBytes: 20_000 } } });
  const read = await new PMTilesSource(url("a.pmtiles", "host-rule"), { client }).getBytes(0, 16384);
  assert.equal(read.data.byteLength, 16384);
});

test("an S3 error document is an error with the server's text", async () => {
  const source = new PMTilesSource(`${server.url}/missing.pmtiles?run=missing`);
  const error = await source.getBytes(0, 16384).then(
    () => null,
    (e) => e,
  );
  assert.deepEqual([error?.kind, error?.status, error?.exceptionCode], ["http", 404, "NoSuchKey"]);
  assert.match(error.message, /The specified key does not exist/);
});

test("two ranges of one URL are two requests; the same range twice in flight is one", async () => {
  const client = new TileClient();
  const source = new PMTilesSource(url("a.pmtiles", "coalesce", "delay=50"), { client });
  const [a, b, c] = await Promise.all([source.getBytes(0, 127), source.getBytes(0, 127), source.getBytes(127, 50)]);
  assert.deepEqual([a.data.byteLength, b.data.byteLength, c.data.byteLength], [127, 127, 50]);
  assert.ok(Buffer.from(c.data).equals(v0.subarray(127, 177)));
  assert.equal(server.requests("coalesce"), 2);
});

test("bad arguments name the field", async () => {
  assert.throws(() => new PMTilesSource(42), /url must be a string/);
  assert.throws(() => new PMTilesSource("http://127.0.0.1/a", { client: {} }), /options.client must be a TileClient/);
  assert.throws(() => new PMTilesSource("http://127.0.0.1/a", { range: { offset: 0, length: 1 } }), /options.range/);
  const error = await new PMTilesSource(url("a.pmtiles", "bad"), { maxBytes: 100 }).getBytes(0, 16384).then(
    () => null,
    (e) => e,
  );
  assert.deepEqual([error?.kind, error?.message.includes("range.length")], ["invalid-options", true], error?.message);
});
