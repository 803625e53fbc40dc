// A tile's body is read without waiting behind the thread's queued tasks, in a Chromium page and a
// dedicated worker: there `arrayBuffer()` of a body already received resolves only after every
// task queued before it (a map's main thread has tile decodes and layout queued), where a read
// through the body's reader does not (readBounded in src/web/transport.js). A call whose `fetch`
// answers at once therefore settles before a task queued when it started; with `arrayBuffer()`
// it settled after.
import { test } from "node:test";
import assert from "node:assert/strict";
import { blankPageSuite, inWorker } from "./helpers.mjs";
import { tilePng } from "../server/fault-server.mjs";

const suite = blankPageSuite();
// The fault server's tile, handed to the page or worker as its bytes.
const TILE = { bytes: Array.from(tilePng(1, 1, 0)) };

// In the page or the worker: calls whose `fetch` answers at once with a tile (`bytes`), each
// started with a task queued just before it; whether that task ran before the call settled.
async function scenario({ bytes }) {
  const { TileClient } = await import("/pkg/browser.js");
  const png = Uint8Array.from(bytes);
  const answer = () => Promise.resolve(new Response(png, { status: 200, headers: { "content-type": "image/png", "content-length": String(png.length) } }));
  const client = new TileClient({ memoryCacheBytes: 0 });
  // The first call waits for the module; the ones after it are what is looked at.
  await client.fetchTile("https://tiles.example/0/0/0.png", { fetch: answer });
  const runs = [];
  for (let i = 1; i <= 5; i++) {
    let taskRan = false;
    setTimeout(() => {
      taskRan = true;
    }, 0);
    const tile = await client.fetchTile(`https://tiles.example/1/${i}/0.png`, { fetch: answer });
    runs.push({ taskRan, bytes: tile.data.length, sent: png.length, exact: tile.data.byteLength === tile.data.buffer.byteLength });
  }
  // The control: here `arrayBuffer()` of the same answer settles after a task queued before it.
  let controlTaskRan = false;
  setTimeout(() => {
    controlTaskRan = true;
  }, 0);
  await (await answer()).arrayBuffer();
  return { runs, controlTaskRan };
}

function check(t, { runs, controlTaskRan }) {
  t.diagnostic(`a task queued before each call ran first in ${runs.filter((r) => r.taskRan).length} of ${runs.length} calls`);
  assert.equal(controlTaskRan, true, "control: arrayBuffer() settles after a task queued before it, in this browser");
  for (const r of runs) {
    assert.equal(r.bytes, r.sent, "the whole tile");
    assert.ok(r.exact, "the tile's bytes are all its buffer holds");
    assert.equal(r.taskRan, false, "the call settled before a task queued when it started");
  }
}

test("page: a tile's body read does not wait behind queued tasks", { timeout: 60_000 }, async (t) => {
  const page = await suite.blankPage();
  check(t, await page.evaluate(scenario, TILE));
  assert.deepEqual(page.problems(), []);
});

test("dedicated worker: a tile's body read does not wait behind queued tasks", { timeout: 60_000 }, async (t) => {
  const page = await suite.blankPage();
  check(t, await inWorker(page, scenario, TILE, suite.web.url));
  assert.deepEqual(page.problems(), []);
});
