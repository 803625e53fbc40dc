// A tile's bytes are its own, whatever its body was read from (readBounded in
// src/web/transport.js reads a body through its reader): chunks a `fetch` option's stream
// enqueued are copied (the script may keep them, and a map may transfer a tile's buffer away),
// a chunk that is a view into a larger buffer too, so `data.buffer` holds the tile and nothing
// else; a body that is no web stream (node-fetch's and cross-fetch's responses carry a Node
// stream) is read whole and still held to `maxBytes`; a chunk that is not a Uint8Array fails the
// attempt, as `arrayBuffer()` fails it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { Readable } from "node:stream";
import { TileClient, TileError } from "../../pkg/node.js";
import { tilePng } from "../server/fault-server.mjs";

const PNG = new Uint8Array(tilePng(3, 2, 1));
const headers = { "content-type": "image/png", "content-length": String(PNG.length) };
// No recent tiles: each call gets what the body read gave, not a kept copy.
const client = () => new TileClient({ memoryCacheBytes: 0 });

/** A `fetch` option answering with a body a script's stream enqueues (`chunks()` per request). */
const streaming = (chunks) => () =>
  Promise.resolve(
    new Response(
      new ReadableStream({
        start(controller) {
          for (const chunk of chunks()) controller.enqueue(chunk);
          controller.close();
        },
      }),
      { status: 200, headers },
    ),
  );

const exact = (data) => data.byteOffset === 0 && data.byteLength === data.buffer.byteLength;

test("a lone chunk a script's stream enqueued is copied: the script's array stays the script's", async () => {
  const enqueued = [];
  const tile = await client().fetchTile("https://tiles.example/3/2/1.png", {
    fetch: streaming(() => {
      const chunk = PNG.slice();
      enqueued.push(chunk);
      return [chunk];
    }),
  });
  assert.deepEqual(tile.data, PNG);
  assert.equal(enqueued.length, 1);
  assert.notEqual(tile.data.buffer, enqueued[0].buffer, "the tile's buffer is not the enqueued chunk's");
  enqueued[0].fill(0);
  assert.deepEqual(tile.data, PNG, "the script changing its chunk leaves the tile as it was");
});

test("chunks that are views into larger buffers, one or several, come out as one exact buffer", async () => {
  const padded = new Uint8Array(PNG.length + 10);
  padded.set(PNG, 3);
  const cases = {
    "one view": () => [padded.subarray(3, 3 + PNG.length)],
    "three views": () => [padded.subarray(3, 20), padded.subarray(20, 100), padded.subarray(100, 3 + PNG.length)],
  };
  for (const [name, chunks] of Object.entries(cases)) {
    const tile = await client().fetchTile(`https://tiles.example/${name.replace(" ", "-")}.png`, { fetch: streaming(chunks) });
    assert.deepEqual(tile.data, PNG, name);
    assert.ok(exact(tile.data), `${name}: data.buffer holds the tile only (${tile.data.byteOffset}+${tile.data.byteLength} of ${tile.data.buffer.byteLength})`);
  }
});

test("a body that is no web stream (a Node stream, as node-fetch's) is read whole and held to maxBytes", async () => {
  // node-fetch's Response as far as a caller's `fetch` option hands it over: a Node Readable as its
  // body, arrayBuffer() to read it whole.
  const nodeFetchLike = () =>
    Promise.resolve({
      ok: true,
      status: 200,
      type: "default",
      url: "https://tiles.example/3/2/1.png",
      headers: new Headers(headers),
      body: Readable.from([Buffer.from(PNG)]),
      arrayBuffer: async () => PNG.slice().buffer,
    });
  const tile = await client().fetchTile("https://tiles.example/3/2/1.png", { fetch: nodeFetchLike });
  assert.deepEqual(tile.data, PNG);
  const undeclared = () =>
    nodeFetchLike().then((r) => {
      r.headers.delete("content-length");
      return r;
    });
  const error = await client()
    .fetchTile("https://tiles.example/3/2/2.png", { fetch: undeclared, maxBytes: 100 })
    .then(
      () => assert.fail("expected too-large"),
      (e) => e,
    );
  assert.ok(error instanceof TileError, String(error));
  assert.equal(error.kind, "too-large", error.message);
});

test("a chunk that is not a Uint8Array fails the attempt, as arrayBuffer() fails it", async () => {
  const error = await client()
    .fetchTile("https://tiles.example/3/2/1.png", { fetch: streaming(() => [PNG.slice().buffer]), deadlineMs: 400 })
    .then(
      () => assert.fail("expected a failure"),
      (e) => e,
    );
  assert.ok(error instanceof TileError, String(error));
  assert.match(String(error.cause?.message ?? error.message), /a body chunk that is not a Uint8Array/);
});
