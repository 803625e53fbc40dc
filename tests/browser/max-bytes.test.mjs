// maxBytes in a Chromium page and a dedicated worker: a streamed 600 MiB body, a declared one and
// a gzip bomb, each with a 1 MiB bound, end as kind "too-large" after one request; the tab's
// process does not take the body (the streamed one is cut within a chunk of the bound).
import { test } from "node:test";
import assert from "node:assert/strict";
import { blankPageSuite, inWorker } from "./helpers.mjs";

const MIB = 1024 * 1024;
const suite = blankPageSuite();

// In the page or the worker: each over-size case with a 1 MiB bound, then a plain tile.
async function scenario({ cases, tile }) {
  const { TileClient } = await import("/pkg/browser.js");
  const client = new TileClient();
  const out = {};
  for (const [name, url] of Object.entries(cases)) {
    const t0 = performance.now();
    try {
      await client.fetchTile(url, { maxBytes: 1024 * 1024 });
      out[name] = { ok: true };
    } catch (e) {
      out[name] = { ok: false, kind: e.kind, attempts: e.attempts, message: e.message, ms: performance.now() - t0 };
    }
  }
  const ok = await client.fetchTile(tile);
  out.tileAfter = ok.data.length;
  out.breaker = Object.values(client.stats())[0].breaker.state;
  return out;
}

const casesOf = (run) => ({
  cases: {
    streamed: `${suite.srv.url}/tile/4/1/1.png?run=${run}-streamed&f=huge`,
    declared: `${suite.srv.url}/tile/4/1/2.png?run=${run}-declared&f=hugelen`,
    bomb: `${suite.srv.url}/tile/4/1/3.png?run=${run}-bomb&f=gzipbomb`,
  },
  tile: `${suite.srv.url}/tile/4/2/2.png?run=${run}-tile`,
});

function check(t, r, run) {
  for (const name of ["streamed", "declared", "bomb"]) {
    const c = r[name];
    assert.deepEqual([c.ok, c.kind, c.attempts], [false, "too-large", 1], `${name}: ${JSON.stringify(c)}`);
    assert.equal(suite.srv.requests(`${run}-${name}`), 1, `${name}: one request`);
  }
  assert.match(r.declared.message, /declared 629145600 bytes/);
  const cutAt = Number(/at (\d+) bytes/.exec(r.streamed.message)[1]);
  // Chromium hands a loopback body over in chunks of up to a few hundred KiB to a MiB or two.
  assert.ok(cutAt > MIB && cutAt <= 3 * MIB, `the stream was cut within a chunk of the bound: at ${cutAt} B`);
  const sent = suite.srv.log.find((e) => e.key.startsWith(`${run}-streamed/`)).bytesSent;
  assert.ok(sent < 64 * MIB, `the server got to write ${sent} B of 600 MiB`);
  assert.ok(r.tileAfter > 0, "a tile after them");
  assert.equal(r.breaker, "closed");
  t.diagnostic(
    `streamed: cut at ${cutAt} B after ${Math.round(r.streamed.ms)} ms (the server wrote ${(sent / MIB).toFixed(1)} MiB); declared: ${Math.round(r.declared.ms)} ms; bomb: ${Math.round(r.bomb.ms)} ms; 1 request each`,
  );
}

test("page: bodies over maxBytes end as too-large after one request", { timeout: 60_000 }, async (t) => {
  const page = await suite.blankPage();
  const r = await page.evaluate(scenario, casesOf("mb-page"));
  check(t, r, "mb-page");
  assert.deepEqual(page.problems(), []);
});

test("dedicated worker: bodies over maxBytes end as too-large after one request", { timeout: 60_000 }, async (t) => {
  const page = await suite.blankPage();
  const r = await inWorker(page, scenario, casesOf("mb-worker"), suite.web.url);
  check(t, r, "mb-worker");
  assert.deepEqual(page.problems(), []);
});
