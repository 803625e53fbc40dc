// A call made from inside another call's running code: a TileClient's `onEvent` and a call's
// `fetch` option run while the module is in the middle of serving a call (a task's poll). A map
// may well ask for the next tile from there; the call must be served like any other, and must not
// find the module's state taken (a panic there traps the module for every later call). Against
// the BUILT package (pkg/node.js) and the loopback fault server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { TileClient } from "../../pkg/node.js";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { tileUrl, assertTile } from "./helpers.mjs";

let srv;
before(async () => {
  srv = await startFaultServer({ seed: 1 });
});
after(async () => {
  await srv?.close();
});

/** A `fetch` option that records the order in which requests go out. */
function recording(sent) {
  return (input, init) => {
    sent.push(typeof input === "string" ? input : input.url);
    return globalThis.fetch(input, init);
  };
}

test("a call started from onEvent is served, its request after the outer one's", async () => {
  const sent = [];
  const outer = tileUrl(srv, "reentrant-event", [4, 1, 1]);
  const inner = tileUrl(srv, "reentrant-event", [4, 1, 2]);
  let started = null;
  const client = new TileClient({
    onEvent: (event) => {
      if (event.type === "attempt" && started === null) started = client.fetchTile(inner, { fetch: recording(sent) });
    },
  });
  const tile = await client.fetchTile(outer, { fetch: recording(sent) });
  assertTile(tile, tilePng(4, 1, 1));
  assert.ok(started, "onEvent ran inside the outer call");
  assertTile(await started, tilePng(4, 1, 2));
  assert.deepEqual(sent, [outer, inner]);
  const second = await client.fetchTile(tileUrl(srv, "reentrant-event", [4, 1, 3]));
  assertTile(second, tilePng(4, 1, 3)); // the module still serves calls afterwards
});

test("a call started from a call's fetch option is served", async () => {
  const sent = [];
  const outer = tileUrl(srv, "reentrant-fetch", [4, 2, 1]);
  const inner = tileUrl(srv, "reentrant-fetch", [4, 2, 2]);
  const client = new TileClient({});
  let started = null;
  const fetchOption = (input, init) => {
    const answer = recording(sent)(input, init);
    if (started === null) started = client.fetchTile(inner, { fetch: recording(sent) });
    return answer;
  };
  const tile = await client.fetchTile(outer, { fetch: fetchOption });
  assertTile(tile, tilePng(4, 2, 1));
  assertTile(await started, tilePng(4, 2, 2));
  assert.equal(sent.length, 2, "one request each");
});
