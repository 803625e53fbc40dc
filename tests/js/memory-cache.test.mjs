// The client's recent tiles (`memoryCacheBytes`): a tile delivered once is handed out again to an
// identical call without a request, as long as its response allows, a copy each time. Against
// the BUILT package (pkg/node.js) and the loopback fault server, whose `cc=` sets the answer's
// Cache-Control (none: as most tile servers send).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { TileClient, TileError } from "../../pkg/node.js";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { tileUrl, keyOf } from "./helpers.mjs";

let srv;
let host;
before(async () => {
  srv = await startFaultServer({ seed: 1 });
  host = `127.0.0.1:${srv.port}`;
});
after(async () => {
  await srv?.close();
});

describe("memoryCacheBytes", () => {
  test("a tile without Cache-Control is served again from memory: no request, attempts 0, its own copy", async () => {
    const client = new TileClient({});
    const url = tileUrl(srv, "mem-none", [5, 1, 2], { cc: "none" });
    const first = await client.fetchTile(url);
    first.data.fill(0); // the caller's bytes are its own
    const again = await client.fetchTile(url);
    assert.equal(srv.requests(keyOf("mem-none", [5, 1, 2])), 1);
    assert.equal(again.attempts, 0);
    assert.equal(again.status, 200);
    assert.equal(again.contentType, "image/png");
    assert.ok(again.headers instanceof Headers);
    assert.equal(again.headers.get("content-length"), String(tilePng(5, 1, 2).length));
    assert.ok(Buffer.from(again.data).equals(tilePng(5, 1, 2)));
    again.data.fill(0);
    // fetch's answer has read-only headers (the Fetch standard's "immutable" guard): shared.
    assert.throws(() => again.headers.set("x-mine", "1"), TypeError);
    const third = await client.fetchTile(url);
    assert.ok(Buffer.from(third.data).equals(tilePng(5, 1, 2)));
    assert.throws(() => third.headers.set("x-mine", "1"), TypeError);
    assert.equal(third.headers.get("x-mine"), null);
    const s = client.stats()[host];
    assert.equal(s.fromMemory, 2);
    assert.equal(s.requests, 3);
    assert.equal(s.successes, 3);
  });

  test("a kept answer a script made (its headers can be changed) gives each caller headers of its own", async () => {
    const client = new TileClient({});
    const url = tileUrl(srv, "mem-script-made", [5, 1, 2]);
    const png = tilePng(5, 1, 2);
    const made = () => Promise.resolve(new Response(png, { headers: { "content-type": "image/png" } }));
    const first = await client.fetchTile(url, { fetch: made });
    first.headers.set("x-first", "1");
    const second = await client.fetchTile(url);
    const third = await client.fetchTile(url);
    assert.equal(client.stats()[host].fromMemory, 2);
    second.headers.set("x-second", "1");
    assert.equal(second.headers.get("x-first"), null, "not the first caller's headers");
    assert.equal(third.headers.get("x-second"), null, "not another later caller's headers");
    assert.equal(third.headers.get("content-type"), "image/png");
  });

  test("no-store is never kept, no-cache never reused, max-age=0 stale at once", async () => {
    const client = new TileClient({});
    for (const cc of ["no-store", "no-cache", "max-age=0", "public, max-age=60, no-store"]) {
      const run = `mem-${cc}`;
      const url = tileUrl(srv, run, [5, 1, 2], { cc });
      await client.fetchTile(url);
      await client.fetchTile(url);
      assert.equal(srv.requests(keyOf(run, [5, 1, 2])), 2, cc);
    }
    assert.equal(client.stats()[host].fromMemory, 0);
  });

  test("max-age less Age bounds the reuse", async () => {
    const client = new TileClient({});
    // max-age=1 with Age: 1: stale on arrival.
    const stale = tileUrl(srv, "mem-aged", [5, 1, 2], { cc: "max-age=1", age: 1 });
    await client.fetchTile(stale);
    await client.fetchTile(stale);
    assert.equal(srv.requests(keyOf("mem-aged", [5, 1, 2])), 2);
    const fresh = tileUrl(srv, "mem-fresh", [5, 1, 2], { cc: "max-age=1" });
    await client.fetchTile(fresh);
    await client.fetchTile(fresh);
    assert.equal(srv.requests(keyOf("mem-fresh", [5, 1, 2])), 1);
    await new Promise((r) => setTimeout(r, 1100));
    await client.fetchTile(fresh);
    assert.equal(srv.requests(keyOf("mem-fresh", [5, 1, 2])), 2, "fetched again once its second had passed");
  });

  test("a call that asks the network (cache: reload, no-store, no-cache) is not served from memory", async () => {
    const client = new TileClient({});
    const url = tileUrl(srv, "mem-reload", [5, 1, 2], { cc: "none" });
    await client.fetchTile(url);
    for (const cache of ["reload", "no-store", "no-cache"]) await client.fetchTile(url, { cache });
    assert.equal(srv.requests(keyOf("mem-reload", [5, 1, 2])), 4);
    await client.fetchTile(url);
    assert.equal(srv.requests(keyOf("mem-reload", [5, 1, 2])), 4, "the reloaded answer is kept");
  });

  test("only an identical call is served: other headers, another range or another URL go out", async () => {
    const client = new TileClient({});
    const url = tileUrl(srv, "mem-ident", [5, 1, 2], { cc: "none" });
    await client.fetchTile(url);
    await client.fetchTile(url, { headers: { "X-Layer": "b" } });
    await client.fetchTile(url, { range: { offset: 0, length: 8 } });
    await client.fetchTile(url, { range: { offset: 8, length: 8 } });
    await client.fetchTile(url, { range: { offset: 0, length: 8 } });
    await client.fetchTile(tileUrl(srv, "mem-ident", [5, 1, 3], { cc: "none" }));
    assert.equal(srv.requests("mem-ident"), 5);
  });

  test("a call with a fetch of its own is not served from memory; what it gets is kept", async () => {
    const client = new TileClient({});
    const url = tileUrl(srv, "mem-own-fetch", [5, 1, 2], { cc: "none" });
    let own = 0;
    const fetch = (input, init) => {
      own += 1;
      return globalThis.fetch(input, init);
    };
    await client.fetchTile(url, { fetch });
    await client.fetchTile(url, { fetch });
    assert.equal(own, 2, "not served from memory");
    await client.fetchTile(url);
    assert.equal(srv.requests(keyOf("mem-own-fetch", [5, 1, 2])), 2, "the plain call is served what the fetch option got");
    // A stand-in answer that says no-store (the adapters' image loads) is not kept.
    const standIn = tileUrl(srv, "mem-stand-in", [5, 1, 2], { cc: "none" });
    const fake = () => Promise.resolve(new Response(tilePng(5, 1, 2), { headers: { "content-type": "image/png", "cache-control": "no-store" } }));
    await client.fetchTile(standIn, { fetch: fake });
    await client.fetchTile(standIn);
    assert.equal(srv.requests(keyOf("mem-stand-in", [5, 1, 2])), 1);
  });

  test("a newer answer that may not be kept forgets the one kept; maxAgeS calls neither served nor kept", async () => {
    let answers = 0;
    // The client's own fetch (not a call's): the same URL answers without Cache-Control, then no-store.
    const fetch = () => {
      answers += 1;
      const cc = answers === 2 ? "no-store" : null;
      return Promise.resolve(new Response(tilePng(5, 1, 2), { headers: { "content-type": "image/png", ...(cc ? { "cache-control": cc } : {}) } }));
    };
    const client = new TileClient({ fetch });
    const url = "https://tiles.example/5/1/2.png";
    await client.fetchTile(url);
    await client.fetchTile(url);
    assert.equal(answers, 1, "kept");
    await client.fetchTile(url, { cache: "reload" });
    await client.fetchTile(url);
    assert.equal(answers, 3, "the no-store answer forgot the kept one");
    const aged = new TileClient({ fetch: () => Promise.resolve(new Response(tilePng(5, 1, 2), { headers: { "content-type": "image/png", age: "10" } })) });
    await aged.fetchTile(url, { maxAgeS: 60 });
    await aged.fetchTile(url, { maxAgeS: 60 });
    await aged.fetchTile(url);
    assert.equal(aged.stats()["tiles.example"].fromMemory, 0, "a call with maxAgeS is neither served nor kept");
  });

  test("a range cut from a whole body holds only its own bytes", async () => {
    const client = new TileClient({});
    // The fault server ignores Range: the whole tile comes, and the range is cut from it.
    const url = tileUrl(srv, "mem-range", [5, 1, 2], { cc: "none" });
    const tile = await client.fetchTile(url, { range: { offset: 8, length: 8 } });
    assert.equal(tile.data.length, 8);
    assert.equal(tile.data.buffer.byteLength, 8, "a copy, not a view of the whole body");
    assert.ok(Buffer.from(tile.data).equals(tilePng(5, 1, 2).subarray(8, 16)));
    const again = await client.fetchTile(url, { range: { offset: 8, length: 8 } });
    assert.equal(again.attempts, 0);
    assert.equal(again.data.buffer.byteLength, 8);
  });

  test("bounded in bytes: 0 keeps nothing, preset batch keeps nothing, and a small bound forgets the oldest", async () => {
    const off = new TileClient({ memoryCacheBytes: 0 });
    const batch = new TileClient({ preset: "batch" });
    for (const [name, client] of [
      ["off", off],
      ["batch", batch],
    ]) {
      const url = tileUrl(srv, `mem-${name}`, [5, 1, 2], { cc: "none" });
      await client.fetchTile(url);
      await client.fetchTile(url);
      assert.equal(srv.requests(`mem-${name}`), 2, name);
    }
    const tile = tilePng(6, 0, 0).length;
    const small = new TileClient({ memoryCacheBytes: tile * 4 + 64 }); // four tiles (one at most a quarter)
    const at = (x) => tileUrl(srv, "mem-small", [6, x, 0], { cc: "none" });
    for (let x = 0; x < 6; x++) await small.fetchTile(at(x));
    await small.fetchTile(at(5));
    await small.fetchTile(at(0));
    assert.equal(srv.requests("mem-small"), 7, "tile 5 from memory, tile 0 forgotten");
  });

  test("a bad memoryCacheBytes is a TypeError-free TileError naming the field", () => {
    for (const bad of [-1, 1.5, "16MB", 2 ** 31]) {
      assert.throws(
        () => new TileClient({ memoryCacheBytes: bad }),
        (e) => e instanceof TileError && e.kind === "invalid-options" && /memoryCacheBytes/.test(e.message),
      );
    }
    assert.throws(() => new TileClient({ hosts: { "a.example": { memoryCacheBytes: 1 } } }), /memoryCacheBytes/);
  });
});
