// The edge build's gate (src/web/gate.rs, UpstreamGateState) reads its messages and writes its
// answers by name through serde-wasm-bindgen. Loaded here in Node as workerd would load it
// (initSync with the compiled module), and spoken to as pkg/worker/gate.js speaks: every field
// of a verdict and a snapshot by name, admits and reports that move the breaker, and messages
// no isolate would send answered without a throw (a panic would trap the module).
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { gateSettings } from "../../pkg/worker/gate.js";
import { initSync, UpstreamGateState } from "../../pkg/gen/tilefetch_edge.js";

initSync({ module: new WebAssembly.Module(fs.readFileSync(new URL("../../pkg/gen/tilefetch_edge_bg.wasm", import.meta.url))) });

const config = () => gateSettings({ failureThreshold: 3, openMs: 1000, maxOpenMs: 5000, ratePerSecond: null, burst: 1 }, 6000);

test("an admit's verdict and the snapshot carry their fields by name", () => {
  const now = 1_000_000;
  const gate = new UpstreamGateState("tiles.example", config(), now);
  assert.deepEqual(gate.admit({ op: "admit", ok: 0, okAgeMs: 0 }, now), {
    allow: true,
    probe: false,
    seq: 1,
    paced: false,
    retryAfterMs: 0,
    reason: "ok",
    state: "closed",
    turn: 0,
  });
  for (let i = 0; i < 3; i++) gate.report({ op: "report", probe: false, status: 503, retryAfter: null, date: null }, now + i);
  const refused = gate.admit({ op: "admit", ok: 0, okAgeMs: 0 }, now + 10);
  assert.equal(refused.allow, false);
  assert.equal(refused.reason, "open");
  assert.equal(refused.state, "open");
  assert.ok(refused.retryAfterMs > 0 && refused.retryAfterMs <= 1200, `${refused.retryAfterMs}`);
  const snapshot = gate.state(now + 10);
  assert.deepEqual(Object.keys(snapshot), ["state", "openUntil", "pausedUntil", "retryAfterMs", "admitted", "denied", "ok", "failed", "opened"]);
  assert.equal(snapshot.state, "open");
  assert.equal(snapshot.pausedUntil, null);
  assert.deepEqual([snapshot.admitted, snapshot.denied, snapshot.failed, snapshot.opened], [1, 1, 3, 1]);
  gate.free();
});

test("a Retry-After reported by name pauses the host; successes told with an admit count", () => {
  const now = 2_000_000;
  const gate = new UpstreamGateState("tiles.example", config(), now);
  gate.admit({ ok: 5, okAgeMs: 10 }, now);
  assert.equal(gate.state(now).ok, 5, "okAgeMs and ok read by name");
  gate.report({ probe: false, status: 429, retryAfter: "2", date: null }, now);
  const verdict = gate.admit({ ok: 0 }, now + 1);
  assert.equal(verdict.allow, false);
  assert.equal(verdict.reason, "pause");
  assert.ok(verdict.retryAfterMs > 1000, `${verdict.retryAfterMs}`);
  gate.free();
});

test("a rate limit told with an admit is read by name, with the seq of the attempt it answered", () => {
  const now = 2_500_000;
  const gate = new UpstreamGateState("tiles.example", config(), now);
  const seqs = [0, 1, 2, 3].map((i) => gate.admit({ ok: 0 }, now + 100 * i).seq);
  assert.deepEqual(seqs, [1, 2, 3, 4], "each admitted attempt is numbered");
  // The answer to attempt 4, the latest, stated 4 left in 2 s: none was on its way after it, nor
  // admitted just before it (told without its seq, the 3 not heard of would come off): a
  // second's worth is 2.
  const rateLimit = 'ratelimit-policy: "tiles";q=10;w=2\nratelimit: "tiles";r=4;t=2\n';
  const first = gate.admit({ ok: 1, okAgeMs: 0, rateLimit, rateLimitSeq: 4 }, now + 310);
  assert.equal(first.allow, true, JSON.stringify(first));
  assert.equal(first.paced, true, "a stated quota paces the upstream");
  const second = gate.admit({ ok: 0 }, now + 311);
  assert.deepEqual([second.allow, second.seq], [true, 6], JSON.stringify(second));
  const third = gate.admit({ ok: 0 }, now + 312);
  assert.deepEqual([third.allow, third.reason, third.seq], [false, "quota", 0], JSON.stringify(third));
  gate.free();
});

test("a refusal for a window's quota gives the attempt a turn, which its next admit shows by name", () => {
  const now = 2_700_000;
  const gate = new UpstreamGateState("tiles.example", config(), now);
  const stated = (r) => `ratelimit-policy: "tiles";q=4;w=2\nratelimit: "tiles";r=${r};t=2\n`;
  for (let i = 0; i < 4; i++) assert.equal(gate.admit({ ok: 0 }, now + i).allow, true);
  gate.report({ probe: false, status: 200, rateLimit: stated(0), seq: 4 }, now + 100);
  // Nothing left: one at a time; its 429 shows the upstream counts in windows.
  assert.equal(gate.admit({ ok: 0 }, now + 2010).allow, true);
  gate.report({ probe: false, status: 429, retryAfter: "2", rateLimit: stated(0), seq: 5 }, now + 2030);
  for (let i = 0; i < 4; i++) assert.equal(gate.admit({ ok: 0 }, now + 4110 + i).allow, true, "the next window");
  const refused = gate.admit({ ok: 0 }, now + 4140);
  assert.deepEqual([refused.allow, refused.reason], [false, "quota"], JSON.stringify(refused));
  assert.ok(refused.turn >= 1, JSON.stringify(refused));
  assert.equal(gate.admit({ ok: 0, turn: refused.turn }, now + 4150).turn, refused.turn, "shown: the same turn");
  assert.notEqual(gate.admit({ ok: 0 }, now + 4160).turn, refused.turn, "not shown: one of its own");
  gate.free();
});

test("messages no isolate sends are answered, never thrown at", () => {
  const now = 3_000_000;
  const gate = new UpstreamGateState("tiles.example", config(), now);
  for (const odd of [undefined, null, 5, "x", [], { ok: "many" }, { ok: Infinity, okAgeMs: NaN }]) {
    assert.equal(gate.admit(odd, now).allow, true, `admit(${JSON.stringify(odd)})`);
  }
  for (const odd of [undefined, null, 7, "x", { status: "503" }, { status: 9999 }, { probe: "yes", status: 200 }]) {
    gate.report(odd, now);
  }
  assert.equal(gate.state(now).state, "closed");
  assert.throws(() => new UpstreamGateState("h", { ...config(), openMs: -1 }, now), /openMs/);
  gate.free();
});

/** One isolate's gated `fetch` (pkg/worker/gated-fetch.js) in front of the gate `stub`, sharing `paced`; `spare`: the call's subrequests left. */
async function isolateFetch(stub, paced, spare = undefined) {
  const { gatedFetch } = await import("../../pkg/worker/gated-fetch.js");
  const maps = { down: new Map(), clean: new Map(), answered: new Map(), paced };
  return gatedFetch({ stubFor: () => stub, cfg: {}, timeoutMs: 1000, ...maps, waitUntil: () => {}, spare }).fetch;
}

test("a stated quota told by name with an admit or a report paces every isolate (reason quota)", async () => {
  const now = 4_000_000;
  const gate = new UpstreamGateState("tiles.example", config(), now);
  gate.admit({ ok: 1, okAgeMs: 0, rateLimit: 'ratelimit: "tiles";r=0;t=5\n' }, now);
  const verdict = gate.admit({ ok: 0 }, now + 1);
  assert.equal(verdict.reason, "quota", JSON.stringify(verdict));
  assert.ok(verdict.retryAfterMs > 4000 && verdict.retryAfterMs <= 5000, `${verdict.retryAfterMs}`);
  const other = new UpstreamGateState("tiles.example", config(), now);
  other.report({ probe: false, status: 429, retryAfter: null, date: null, rateLimit: "x-ratelimit-remaining: 0\nx-ratelimit-reset: 3\n" }, now);
  assert.equal(other.admit({ ok: 0 }, now + 1).reason, "quota", "the legacy fields, from a report");
  gate.free();
  other.free();

  // The isolate's side: the fields an upstream's answer states go to the gate by name.
  const sent = [];
  const stub = {
    fetch: async (_url, init) => {
      sent.push(JSON.parse(init.body));
      return new Response(JSON.stringify({ allow: true, probe: false, seq: 1, paced: false, retryAfterMs: 0, reason: "ok", state: "closed" }));
    },
  };
  const upstream = globalThis.fetch;
  globalThis.fetch = async () => new Response("tile", { headers: { RateLimit: '"tiles";r=3;t=1', "RateLimit-Policy": '"tiles";q=10;w=1' } });
  const paced = new Map();
  let seen;
  try {
    const gated = await isolateFetch(stub, paced);
    seen = await gated("https://tiles.example/1/0/0.png");
    await gated("https://tiles.example/1/0/1.png");
  } finally {
    globalThis.fetch = upstream;
  }
  const admits = sent.filter((m) => m.op === "admit");
  assert.equal(admits.length, 2);
  assert.equal(admits[1].rateLimit, 'ratelimit-policy: "tiles";q=10;w=1\nratelimit: "tiles";r=3;t=1\n', "the first answer's statement, with the next admit");
  assert.equal(admits[1].rateLimitSeq, 1, "and the seq of the attempt it answered");
  // The quota is the gate's to spend: the isolate's client does not see it, and knows it paces.
  assert.equal(seen.headers.get("ratelimit"), null);
  assert.equal(await seen.text(), "tile");
  assert.equal(paced.get("tiles.example"), true);
});

test("a hedge to an upstream a rate paces waits for the attempt it hedges, and is dropped with it", async () => {
  const stub = {
    fetch: async () => new Response(JSON.stringify({ allow: true, probe: false, seq: 1, paced: true, retryAfterMs: 0, reason: "ok", state: "closed" })),
  };
  const upstream = globalThis.fetch;
  // What each upstream request does, in order: held until the test settles it, or a tile.
  const plan = ["hold", "hold", "tile"];
  const sent = [];
  let settle;
  globalThis.fetch = () => {
    sent.push(plan[sent.length]);
    return sent.at(-1) === "hold" ? new Promise((resolve, reject) => (settle = { resolve, reject })) : Promise.resolve(new Response("tile"));
  };
  const pause = (ms) => new Promise((r) => setTimeout(r, ms));
  try {
    const paced = new Map([["tiles.example", true]]);
    const gated = await isolateFetch(stub, paced);
    // The first attempt is answered: the call reads it and drops its hedge, which never went.
    const first = gated("https://tiles.example/1/0/0.png");
    await pause(20);
    const hedge = new AbortController();
    const second = gated("https://tiles.example/1/0/0.png", { signal: hedge.signal });
    await pause(30);
    assert.equal(sent.length, 1, "the hedge did not go while the first is out");
    settle.resolve(new Response("tile"));
    await first;
    await pause(30);
    assert.equal(sent.length, 1, "nor once it was answered, while the call reads it");
    hedge.abort(new DOMException("the hedge lost", "AbortError"));
    await assert.rejects(second, { name: "AbortError" });
    assert.equal(sent.length, 1);
    // The first attempt fails: the hedge goes at once.
    const third = gated("https://tiles.example/1/0/1.png");
    await pause(20);
    const fourth = gated("https://tiles.example/1/0/1.png");
    settle.reject(new TypeError("fetch failed"));
    await assert.rejects(third, TypeError);
    assert.equal((await fourth).status, 200);
    assert.equal(sent.length, 3);
  } finally {
    globalThis.fetch = upstream;
  }
});

test("refused for a quota whose next request is due soon, an attempt waits at the gate and asks again; longer, it is a 503", async () => {
  const { QUEUED_MS } = await import("../../pkg/worker/gated-fetch.js");
  const verdicts = [];
  const sent = [];
  const stub = {
    fetch: async (_url, init) => {
      const message = JSON.parse(init.body);
      sent.push(message);
      return new Response(JSON.stringify(message.op === "admit" ? verdicts.shift() : {}));
    },
  };
  const refuse = (retryAfterMs) => ({ allow: false, probe: false, seq: 0, paced: true, retryAfterMs, reason: "quota", state: "closed" });
  const allow = (seq) => ({ allow: true, probe: false, seq, paced: true, retryAfterMs: 0, reason: "ok", state: "closed" });
  const upstream = globalThis.fetch;
  const requests = [];
  globalThis.fetch = async (url) => {
    requests.push(url);
    return new Response("tile");
  };
  try {
    const gated = await isolateFetch(stub, new Map());
    // Two short waits, then a place: one attempt, no 503 for the client to back off from.
    verdicts.push(refuse(40), refuse(40), allow(7));
    const t = performance.now();
    const tile = await gated("https://tiles.example/1/0/0.png");
    assert.equal(tile.status, 200);
    assert.ok(performance.now() - t >= 75, "it waited the gate's waits");
    assert.equal(sent.filter((m) => m.op === "admit").length, 3);
    assert.equal(requests.length, 1);
    // A tile while the quota paces: told at once, by its seq, not with the next admit.
    await new Promise((r) => setTimeout(r, 10));
    const reports = sent.filter((m) => m.op === "report");
    assert.deepEqual(
      reports.map((m) => [m.status, m.seq]),
      [[200, 7]],
    );
    // A wait past what an attempt may wait at the gate: the client gets the 503 and its wait;
    // the call's next attempt shows the turn the refusal gave, and one after a place none.
    verdicts.push({ ...refuse(QUEUED_MS + 1), turn: 9 });
    const refused = await gated("https://tiles.example/1/0/1.png");
    assert.equal(refused.status, 503);
    assert.equal(refused.headers.get("x-tilefetch-gate"), "quota");
    assert.equal(requests.length, 1);
    verdicts.push(allow(8), allow(9));
    assert.equal((await gated("https://tiles.example/1/0/1.png")).status, 200);
    assert.equal((await gated("https://tiles.example/1/0/1.png")).status, 200);
    assert.equal(requests.length, 3);
    assert.deepEqual(
      sent
        .filter((m) => m.op === "admit")
        .map((m) => m.turn)
        .slice(-3),
      [0, 9, 0],
    );
    // A call with no subrequests to spare for the attempt and its report asks no more.
    const spent = await isolateFetch(stub, new Map(), () => 2);
    verdicts.push(refuse(40));
    assert.equal((await spent("https://tiles.example/1/0/3.png")).status, 503);
    // Its caller gone while it waits: the attempt ends with the caller's reason, nothing sent.
    verdicts.push(refuse(200), allow(8));
    const caller = new AbortController();
    const left = gated("https://tiles.example/1/0/2.png", { signal: caller.signal });
    await new Promise((r) => setTimeout(r, 20));
    caller.abort(new DOMException("the tile left the view", "AbortError"));
    await assert.rejects(left, { name: "AbortError" });
    assert.equal(requests.length, 3);
  } finally {
    globalThis.fetch = upstream;
  }
});

test("an upstream that states a quota gets no attempt before its admit is answered (an early one counts there even when cut off)", async () => {
  const stub = {
    fetch: () =>
      new Promise((resolve) =>
        setTimeout(
          () => resolve(new Response(JSON.stringify({ allow: true, probe: false, seq: 1, paced: false, retryAfterMs: 0, reason: "ok", state: "closed" }))),
          30,
        ),
      ),
  };
  const upstream = globalThis.fetch;
  const sentAfter = {};
  let quota = false;
  const started = {};
  globalThis.fetch = (url) => {
    sentAfter[url] = performance.now() - started[url];
    const headers = quota ? { RateLimit: '"tiles";r=50;t=2', "RateLimit-Policy": '"tiles";q=60;w=2' } : {};
    return new Promise((resolve) => setTimeout(() => resolve(new Response("tile", { headers })), 50));
  };
  try {
    const gated = await isolateFetch(stub, new Map());
    const call = (y) => {
      const url = `https://tiles.example/1/0/${y}.png`;
      started[url] = performance.now();
      return gated(url);
    };
    // Two calls overlapping: the second starts after the first's "closed, go", before its answer.
    const overlapping = async (a, b) => {
      const first = call(a);
      await new Promise((r) => setTimeout(r, 40));
      await Promise.all([first, call(b)]);
    };
    await overlapping(0, 1);
    assert.ok(sentAfter["https://tiles.example/1/0/1.png"] < 20, `an early attempt, to an upstream stating nothing: ${JSON.stringify(sentAfter)}`);
    quota = true;
    await call(2); // states a quota
    await overlapping(3, 4);
    assert.ok(sentAfter["https://tiles.example/1/0/4.png"] >= 25, `after its admit, once it stated a quota: ${JSON.stringify(sentAfter)}`);
  } finally {
    globalThis.fetch = upstream;
  }
});
