// A host that states its rate limit (RateLimit-Policy and RateLimit, the fault server's `stated=1`
// bucket): a TileClient paces by it, is not refused, shows it in stats() and says when pacing
// starts. Runs against the BUILT package (pkg/node.js).
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { TileClient } from "../../pkg/node.js";
import { startFaultServer } from "../server/fault-server.mjs";
import { tileUrl } from "./helpers.mjs";
import { fieldsOf } from "./dts.mjs";

let srv;
let host;
before(async () => {
  srv = await startFaultServer({ seed: 1 });
  host = `127.0.0.1:${srv.port}`;
});
after(async () => {
  await srv?.close();
});

/** Tiles 0 … n−1 of one run through `client`, `concurrency` at a time. */
async function load(client, run, n, params, concurrency = 16) {
  let next = 0;
  const outcomes = [];
  const worker = async () => {
    while (next < n) {
      const i = next++;
      outcomes[i] = await client.fetchTile(tileUrl(srv, run, [12, i % 40, Math.floor(i / 40)], params)).then(
        () => "tile",
        (e) => e.kind,
      );
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return outcomes;
}

describe("a host that states its quota", () => {
  // 40 requests/s, a bucket of 20: 120 tiles take ≥ 2.5 s however they are sent.
  const bucket = { f: "bucket", rate: 40, burst: 20, ra: 1, stated: 1 };

  test("is paced by it: every tile, no 429 once stated, its statement in stats(), a pacing event", async (t) => {
    const events = [];
    const client = new TileClient({ onEvent: (e) => events.push(e) });
    const outcomes = await load(client, "sq", 120, bucket);
    const log = srv.log.filter((e) => e.key.startsWith("sq/"));
    const refused = log.filter((e) => e.fault === "bucket-429").length;
    t.diagnostic(`${log.length} requests, ${refused} refused; events ${events.filter((e) => e.type === "pacing").length} pacing`);
    assert.deepEqual(
      outcomes.filter((o) => o !== "tile"),
      [],
      "every tile",
    );
    assert.ok(refused <= 1, `${refused} of ${log.length} requests refused`);
    const pacing = events.filter((e) => e.type === "pacing");
    assert.ok(pacing.length >= 1, "a pacing event");
    assert.equal(pacing[0].host, host);
    assert.ok(pacing[0].perSecond > 0 && pacing[0].until > Date.now() - 5_000, JSON.stringify(pacing[0]));
    // The statement stays in force for its stated second after the last answer.
    const stated = client.stats()[host].statedLimit;
    assert.ok(stated, "statedLimit in stats()");
    const declared = fieldsOf("StatedLimit");
    assert.deepEqual(Object.keys(stated).sort(), [...declared.keys()].sort(), "the fields the .d.ts promises");
    for (const [name, field] of declared) assert.ok(field.accepts(stated[name]), `${name}: ${stated[name]} is not ${field.type}`);
    assert.equal(stated.policy, "tiles");
    assert.equal(stated.quota, 40, "40 a second");
    assert.equal(stated.windowS, 1);
    assert.ok(stated.remaining >= 0 && stated.remaining <= 20);
    client.free();
  });

  test("without the statement the same bucket refuses the first flight over its burst, and stats() shows none", async () => {
    const client = new TileClient();
    await load(client, "sq-plain", 60, { ...bucket, stated: 0 }, 32);
    const refused = srv.log.filter((e) => e.key.startsWith("sq-plain/") && e.fault === "bucket-429").length;
    assert.ok(refused >= 5, `${refused} refused: the check above can tell`);
    assert.equal(client.stats()[host].statedLimit, null);
    client.free();
  });
});
