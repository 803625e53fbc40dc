// Self-test of the loopback fault server: node --test tests/server/
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import zlib from "node:zlib";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import {
  startFaultServer,
  tilePng,
  crc32,
  prng,
  paretoDelay,
  PNG_SIGNATURE,
  bucketStatement,
  takeBucketToken,
  takeWindowRequest,
  windowStatement,
} from "./fault-server.mjs";

const SERVER_FILE = fileURLToPath(new URL("./fault-server.mjs", import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitFor(pred, { timeout = 2000, step = 10 } = {}) {
  const end = Date.now() + timeout;
  while (Date.now() < end) {
    if (await pred()) return true;
    await sleep(step);
  }
  return pred();
}

/** Raw GET with node:http (no decoding, sees partial bodies). */
function rawGet(url, { agent = false } = {}) {
  return new Promise((resolve) => {
    const chunks = [];
    const req = http.get(url, { agent }, (res) => {
      res.on("data", (c) => chunks.push(c));
      res.on("end", () => resolve({ res, body: Buffer.concat(chunks), complete: res.complete, error: null }));
      res.on("error", (error) => resolve({ res, body: Buffer.concat(chunks), complete: false, error }));
      res.on("aborted", () => {});
      res.on("close", () => resolve({ res, body: Buffer.concat(chunks), complete: res.complete, error: res.complete ? null : new Error("closed early") }));
    });
    req.on("error", (error) => resolve({ res: null, body: Buffer.concat(chunks), complete: false, error }));
  });
}

function parsePng(buf) {
  assert.ok(buf.subarray(0, 8).equals(PNG_SIGNATURE), "PNG signature");
  const chunks = [];
  let o = 8;
  while (o < buf.length) {
    const len = buf.readUInt32BE(o);
    const type = buf.toString("latin1", o + 4, o + 8);
    const data = buf.subarray(o + 8, o + 8 + len);
    const crc = buf.readUInt32BE(o + 8 + len);
    assert.equal(crc, crc32(buf.subarray(o + 4, o + 8 + len)), `CRC of ${type}`);
    chunks.push({ type, data });
    o += 12 + len;
  }
  assert.equal(o, buf.length, "no trailing bytes");
  return chunks;
}

describe("tilePng", () => {
  test("is a valid 256x256 RGB PNG ending in IEND", () => {
    const png = tilePng(5, 10, 12);
    const chunks = parsePng(png);
    assert.equal(chunks[0].type, "IHDR");
    const ihdr = chunks[0].data;
    assert.equal(ihdr.readUInt32BE(0), 256);
    assert.equal(ihdr.readUInt32BE(4), 256);
    assert.equal(ihdr[8], 8);
    assert.equal(ihdr[9], 2);
    assert.equal(chunks.at(-1).type, "IEND");
    assert.equal(chunks.at(-1).data.length, 0);
    assert.ok(png.subarray(-12).equals(Buffer.from("0000000049454e44ae426082", "hex")), "IEND bytes");
    const idat = Buffer.concat(chunks.filter((c) => c.type === "IDAT").map((c) => c.data));
    const raw = zlib.inflateSync(idat);
    assert.equal(raw.length, 256 * (1 + 256 * 3));
    // Corner pixel is on the grid (darker) and the centre pixel is the base colour.
    const px = (x, y) => raw.subarray(y * 769 + 1 + x * 3, y * 769 + 1 + x * 3 + 3);
    const corner = px(0, 0);
    const centre = px(100, 100);
    for (let i = 0; i < 3; i++) assert.ok(corner[i] < centre[i], "grid is darker");
  });

  test("is deterministic per z/x/y and distinct between tiles", () => {
    assert.equal(tilePng(1, 0, 0), tilePng(1, 0, 0), "cached");
    const seen = new Set();
    for (let x = 0; x < 8; x++) for (let y = 0; y < 8; y++) seen.add(tilePng(6, x, y).toString("base64"));
    assert.equal(seen.size, 64);
  });

  test("prng is deterministic and in [0,1)", () => {
    for (let n = 1; n < 200; n++) {
      const v = prng(1, "k", n);
      assert.equal(v, prng(1, "k", n));
      assert.ok(v >= 0 && v < 1);
    }
    const mean = Array.from({ length: 2000 }, (_, i) => prng(3, "m", i)).reduce((a, b) => a + b) / 2000;
    assert.ok(Math.abs(mean - 0.5) < 0.05, `mean ${mean}`);
  });
});

describe("fault server", () => {
  let srv;
  before(async () => {
    srv = await startFaultServer({ seed: 1 });
  });
  after(async () => {
    await srv.close();
  });

  test("binds loopback and serves /health", async () => {
    assert.match(srv.url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const r = await fetch(`${srv.url}/health`);
    assert.equal(r.status, 200);
    assert.equal(await r.text(), "ok");
  });

  test("plain tile: 200 image/png, correct bytes and Content-Length, CORS headers", async () => {
    const r = await fetch(`${srv.url}/tile/3/1/2.png?run=plain`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "image/png");
    const body = Buffer.from(await r.arrayBuffer());
    assert.ok(body.equals(tilePng(3, 1, 2)));
    assert.equal(Number(r.headers.get("content-length")), body.length);
    assert.equal(r.headers.get("access-control-allow-origin"), "*");
    assert.equal(r.headers.get("access-control-expose-headers"), "*");
    assert.equal(r.headers.get("cache-control"), "no-store");
    assert.equal(srv.requests("plain/3/1/2"), 1);
    assert.equal(srv.requests("plain"), 1);
    assert.equal(srv.aborted("plain"), 0);
  });

  test("cc=: the answer's Cache-Control replaced, or none at all", async () => {
    const none = await fetch(`${srv.url}/tile/3/1/2.png?run=cc&cc=none`);
    await none.arrayBuffer();
    assert.equal(none.headers.get("cache-control"), null);
    const given = await fetch(`${srv.url}/tile/3/1/2.png?run=cc&cc=max-age%3D60`);
    await given.arrayBuffer();
    assert.equal(given.headers.get("cache-control"), "max-age=60");
  });

  test("CORS headers on errors and OPTIONS preflight (not counted)", async () => {
    const e = await fetch(`${srv.url}/tile/0/0/0.png?run=cors&f=404`);
    assert.equal(e.status, 404);
    await e.arrayBuffer();
    for (const h of ["access-control-allow-origin", "access-control-allow-headers", "access-control-expose-headers"]) {
      assert.equal(e.headers.get(h), "*", h);
    }
    assert.equal(e.headers.get("cache-control"), "no-store");
    const o = await fetch(`${srv.url}/tile/0/0/0.png?run=cors`, { method: "OPTIONS" });
    assert.equal(o.status, 204);
    assert.equal(o.headers.get("access-control-allow-origin"), "*");
    assert.equal(o.headers.get("access-control-allow-headers"), "*");
    assert.equal(srv.requests("cors"), 1);
  });

  test("n limits the fault to the first n requests of a key", async () => {
    const statuses = [];
    for (let i = 0; i < 4; i++) {
      const r = await fetch(`${srv.url}/tile/2/1/1.png?run=nlim&f=503&n=2`);
      statuses.push(r.status);
      await r.arrayBuffer();
    }
    assert.deepEqual(statuses, [503, 503, 200, 200]);
    assert.equal(srv.requests("nlim/2/1/1"), 4);
    assert.deepEqual(
      srv.log.filter((e) => e.key === "nlim/2/1/1").map((e) => e.fault),
      ["503", "503", "none", "none"],
    );
    // Counters are per key: another tile of the same run starts at n=1 again.
    const r = await fetch(`${srv.url}/tile/2/1/2.png?run=nlim&f=503&n=2`);
    assert.equal(r.status, 503);
    await r.arrayBuffer();
  });

  test("p: 0 never, 1 always, 0.3 roughly 30% and reproducible across servers with the same seed", async () => {
    const pattern = async (s, run) => {
      const out = [];
      for (let i = 0; i < 60; i++) {
        const r = await fetch(`${s.url}/tile/4/${i}/0.png?run=${run}&f=503&p=0.3`);
        out.push(r.status);
        await r.arrayBuffer();
      }
      return out.join(",");
    };
    const a = await pattern(srv, "prob");
    const other = await startFaultServer({ seed: 1 });
    const other2 = await startFaultServer({ seed: 2 });
    try {
      assert.equal(await pattern(other, "prob"), a, "same seed -> same faults");
      assert.notEqual(await pattern(other2, "prob"), a, "different seed -> different faults");
    } finally {
      await other.close();
      await other2.close();
    }
    const fails = a.split(",").filter((s) => s === "503").length;
    assert.ok(fails > 5 && fails < 35, `503 count ${fails}/60`);
    for (const [p, want] of [
      ["0", 200],
      ["1", 503],
    ]) {
      for (let i = 0; i < 5; i++) {
        const r = await fetch(`${srv.url}/tile/4/${i}/1.png?run=p${p}&f=503&p=${p}`);
        assert.equal(r.status, want);
        await r.arrayBuffer();
      }
    }
  });

  test("p combined with n", async () => {
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${srv.url}/tile/1/1/1.png?run=pn&f=500&p=1&n=0`);
      assert.equal(r.status, 200);
      await r.arrayBuffer();
    }
  });

  test("status faults and Retry-After forms", async () => {
    for (const code of [503, 500, 502, 504, 408, 429, 404, 403, 400, 410]) {
      const r = await fetch(`${srv.url}/tile/1/0/0.png?run=st${code}&f=${code}&ra=7`);
      assert.equal(r.status, code);
      await r.arrayBuffer();
      if ([503, 500, 502, 504, 408, 429].includes(code)) assert.equal(r.headers.get("retry-after"), "7");
      else assert.equal(r.headers.get("retry-after"), null);
    }
    let r = await fetch(`${srv.url}/tile/1/0/0.png?run=ra1&f=429`);
    assert.equal(r.headers.get("retry-after"), null, "no ra -> no Retry-After");
    await r.arrayBuffer();
    const before = Date.now();
    r = await fetch(`${srv.url}/tile/1/0/0.png?run=ra2&f=429&ra=date:3`);
    await r.arrayBuffer();
    const ra = r.headers.get("retry-after");
    assert.match(ra, /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/, "IMF-fixdate");
    const delta = Date.parse(ra) - before;
    assert.ok(delta >= 1900 && delta <= 3100, `date delta ${delta}`);
    r = await fetch(`${srv.url}/tile/1/0/0.png?run=ra3&f=503&ra=${encodeURIComponent("raw:soon-ish")}`);
    await r.arrayBuffer();
    assert.equal(r.headers.get("retry-after"), "soon-ish");
  });

  test("204 has no body", async () => {
    const { res, body } = await rawGet(`${srv.url}/tile/1/0/0.png?run=nc&f=204`);
    assert.equal(res.statusCode, 204);
    assert.equal(body.length, 0);
  });

  test("reset: full Content-Length, about half the body, then the socket dies", async () => {
    const png = tilePng(7, 3, 3);
    const { res, body, complete } = await rawGet(`${srv.url}/tile/7/3/3.png?run=reset&f=reset`);
    assert.equal(res.statusCode, 200);
    assert.equal(Number(res.headers["content-length"]), png.length);
    assert.equal(complete, false);
    assert.ok(body.length < png.length && body.length > 0, `got ${body.length}/${png.length}`);
    await assert.rejects(async () => {
      const r = await fetch(`${srv.url}/tile/7/3/3.png?run=reset2&f=reset`);
      await r.arrayBuffer();
    });
    assert.equal(srv.aborted("reset"), 0, "server-side reset is not a client abort");
  });

  test("truncate: chunked, no Content-Length, ends normally with half a PNG (no IEND)", async () => {
    const png = tilePng(7, 3, 4);
    const { res, body, complete } = await rawGet(`${srv.url}/tile/7/3/4.png?run=trunc&f=truncate`);
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers["content-type"], "image/png");
    assert.equal(res.headers["content-length"], undefined);
    assert.equal(res.headers["transfer-encoding"], "chunked");
    assert.equal(complete, true);
    assert.equal(body.length, Math.floor(png.length / 2));
    assert.ok(png.subarray(0, body.length).equals(body));
    assert.equal(body.includes(Buffer.from("IEND")), false);
    const r = await fetch(`${srv.url}/tile/7/3/4.png?run=trunc2&f=truncate`);
    assert.equal((await r.arrayBuffer()).byteLength, body.length, "fetch sees a normal, short body");
  });

  test("shortlen: Content-Length larger than the body, then a clean socket end", async () => {
    const png = tilePng(7, 3, 5);
    const { res, body, complete } = await rawGet(`${srv.url}/tile/7/3/5.png?run=short&f=shortlen`);
    assert.equal(res.statusCode, 200);
    assert.ok(Number(res.headers["content-length"]) > png.length);
    assert.equal(complete, false);
    assert.ok(body.length <= png.length);
    await assert.rejects(async () => {
      const r = await fetch(`${srv.url}/tile/7/3/5.png?run=short2&f=shortlen`);
      await r.arrayBuffer();
    });
    assert.equal(srv.aborted("short"), 0);
  });

  test("service exception bodies, html, json", async () => {
    let r = await fetch(`${srv.url}/tile/1/0/0.png?run=se&f=sexml&code=InvalidParameterValue`);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get("content-type"), "application/vnd.ogc.se_xml");
    let t = await r.text();
    assert.ok(t.startsWith('<?xml version="1.0"?>'));
    assert.match(t, /<ServiceExceptionReport version="1\.3\.0" xmlns="http:\/\/www\.opengis\.net\/ogc"/);
    assert.match(t, /<ServiceException code="InvalidParameterValue">/);
    r = await fetch(`${srv.url}/tile/1/0/0.png?run=se2&f=sexml`);
    assert.match(await r.text(), /code="NoApplicableCode"/);
    r = await fetch(`${srv.url}/tile/1/0/0.png?run=ows&f=owsxml&code=TileOutOfRange`);
    assert.equal(r.headers.get("content-type"), "text/xml");
    t = await r.text();
    assert.match(t, /<ows:ExceptionReport /);
    assert.match(t, /<ows:Exception exceptionCode="TileOutOfRange"/);
    r = await fetch(`${srv.url}/tile/1/0/0.png?run=html&f=html`);
    assert.equal(r.headers.get("content-type"), "text/html; charset=utf-8");
    t = await r.text();
    assert.ok(t.startsWith("<!DOCTYPE html><html>") || t.startsWith("<!DOCTYPE html>"));
    assert.match(t, /502 Bad Gateway/);
    r = await fetch(`${srv.url}/tile/1/0/0.png?run=json&f=json`);
    assert.equal(r.headers.get("content-type"), "application/json");
    assert.deepEqual(await r.json(), { error: "quota" });
  });

  test("gzip: Content-Encoding gzip with the compressed length; fetch decodes to the PNG", async () => {
    const png = tilePng(2, 2, 2);
    const { res, body } = await rawGet(`${srv.url}/tile/2/2/2.png?run=gz&f=gzip`);
    assert.equal(res.headers["content-encoding"], "gzip");
    assert.equal(Number(res.headers["content-length"]), body.length);
    assert.ok(zlib.gunzipSync(body).equals(png));
    const r = await fetch(`${srv.url}/tile/2/2/2.png?run=gz2&f=gzip`);
    assert.ok(Buffer.from(await r.arrayBuffer()).equals(png));
  });

  test("delay and slowp/slowms", async () => {
    let t = performance.now();
    let r = await fetch(`${srv.url}/tile/1/0/0.png?run=delay&delay=150`);
    await r.arrayBuffer();
    assert.ok(performance.now() - t >= 140);
    t = performance.now();
    r = await fetch(`${srv.url}/tile/1/0/0.png?run=slow&slowp=1&slowms=150`);
    await r.arrayBuffer();
    assert.ok(performance.now() - t >= 140);
    t = performance.now();
    r = await fetch(`${srv.url}/tile/1/0/0.png?run=slow0&slowp=0&slowms=5000`);
    await r.arrayBuffer();
    assert.ok(performance.now() - t < 1000);
  });

  test("delayjitter: a seeded uniform extra delay in [0, MS) per key and attempt, logged as delayMs", async () => {
    const keys = Array.from({ length: 40 }, (_, i) => [5, i, 3]);
    await Promise.all(keys.map(async ([z, x, y]) => (await fetch(`${srv.url}/tile/${z}/${x}/${y}.png?run=jit&delay=3&delayjitter=20`)).arrayBuffer()));
    const extra = srv.log
      .filter((e) => e.key.startsWith("jit/"))
      .map((e) => {
        assert.equal(e.delayMs, 3 + 20 * prng(srv.seed, e.key, e.n, "jitter"), "reproducible");
        return e.delayMs - 3;
      });
    assert.equal(extra.length, 40);
    assert.ok(
      extra.every((d) => d >= 0 && d < 20),
      `within [0, 20): ${extra}`,
    );
    assert.ok(Math.max(...extra) - Math.min(...extra) > 5, `spread: ${extra}`);
  });

  test("tailms/alpha/tailmaxms: a seeded Pareto delay per key and attempt, capped, logged as delayMs", async () => {
    const keys = Array.from({ length: 60 }, (_, i) => [4, i, 3]);
    const q = "run=tail&tailms=2&alpha=0.8&tailmaxms=80&delay=1";
    await Promise.all(keys.map(async ([z, x, y]) => (await fetch(`${srv.url}/tile/${z}/${x}/${y}.png?${q}`)).arrayBuffer()));
    const delays = srv.log
      .filter((e) => e.key.startsWith("tail/"))
      .map((e) => {
        const [, z, x, y] = e.key.split("/");
        assert.equal(e.delayMs, 1 + paretoDelay(prng(srv.seed, `tail/${z}/${x}/${y}`, e.n, "tail"), 2, 0.8, 80), "reproducible");
        return e.delayMs - 1;
      });
    assert.equal(delays.length, 60);
    assert.ok(
      delays.every((d) => d >= 2 && d <= 80),
      `within [xm, cap]: ${delays}`,
    );
    delays.sort((a, b) => a - b);
    assert.ok(delays[30] < 10, `median near xm·2^(1/alpha) ≈ 4.8 ms: ${delays}`);
    assert.ok(delays[59] > 20, `a heavy tail: ${delays}`);
    assert.equal(paretoDelay(0, 50, 1, 1000), 50);
    assert.equal(paretoDelay(0.99, 50, 1, 1000), 1000, "capped");
    assert.equal(paretoDelay(0.9, 50, 1, 1e6), 500);
  });

  test("client abort during delay is counted as aborted", async () => {
    await assert.rejects(fetch(`${srv.url}/tile/1/0/0.png?run=dab&delay=3000`, { signal: AbortSignal.timeout(100) }));
    assert.ok(await waitFor(() => srv.aborted("dab/1/0/0") === 1), "aborted counted");
    assert.equal(srv.requests("dab/1/0/0"), 1);
  });

  test("hang + client abort is counted as aborted", async () => {
    const t = performance.now();
    await assert.rejects(fetch(`${srv.url}/tile/9/9/9.png?run=hang&f=hang`, { signal: AbortSignal.timeout(200) }), { name: "TimeoutError" });
    assert.ok(performance.now() - t < 1000);
    assert.ok(await waitFor(() => srv.aborted("hang/9/9/9") === 1), "aborted counted");
    assert.equal(srv.requests("hang/9/9/9"), 1);
    const entry = srv.log.find((e) => e.key === "hang/9/9/9");
    assert.equal(entry.outcome, "aborted");
    assert.equal(entry.fault, "hang");
  });

  test("/count reports per run", async () => {
    const r = await fetch(`${srv.url}/count?run=hang`);
    assert.equal(r.headers.get("access-control-allow-origin"), "*");
    assert.deepEqual(await r.json(), { requests: 1, aborted: 1, concurrent: 0, peakConcurrent: 1 });
    const all = await (await fetch(`${srv.url}/count`)).json();
    assert.equal(all.requests, srv.requests());
    assert.equal(all.aborted, srv.aborted());
  });

  test("log entries have key, path, fault, outcome, t", () => {
    const e = srv.log.find((x) => x.key === "nlim/2/1/1");
    assert.equal(e.path, "/tile/2/1/1.png?run=nlim&f=503&n=2");
    assert.equal(e.fault, "503");
    assert.equal(e.outcome, "sent");
    assert.equal(typeof e.t, "number");
  });
});

describe("concurrency, outage, token bucket", () => {
  let srv;
  before(async () => {
    srv = await startFaultServer({ seed: 1 });
  });
  after(async () => {
    await srv.close();
  });

  const get = async (url) => {
    const r = await fetch(url);
    const body = Buffer.from(await r.arrayBuffer());
    return { status: r.status, headers: r.headers, body };
  };

  test("concurrent / peakConcurrent per run, per key prefix and in total; /count reports them", async () => {
    assert.equal(srv.concurrent("conc"), 0);
    assert.equal(srv.peakConcurrent("conc"), 0);
    const pending = [];
    for (let i = 0; i < 5; i++) pending.push(get(`${srv.url}/tile/3/${i}/0.png?run=conc&delay=300`));
    pending.push(get(`${srv.url}/tile/3/0/0.png?run=conc2&delay=300`));
    // Six requests in flight; the sixth (conc2) may arrive after the first five.
    assert.ok(await waitFor(() => srv.concurrent("conc") === 5 && srv.concurrent("conc2") === 1), `open ${srv.concurrent("conc")}`);
    assert.equal(srv.concurrent("conc2"), 1, "runs are separate (conc is not a prefix of conc2)");
    assert.equal(srv.concurrent("conc/3"), 5);
    assert.equal(srv.concurrent("conc/3/0/0"), 1);
    assert.ok(srv.concurrent() >= 6);
    const mid = await (await fetch(`${srv.url}/count?run=conc`)).json();
    assert.deepEqual(mid, { requests: 5, aborted: 0, concurrent: 5, peakConcurrent: 5 });
    for (const r of await Promise.all(pending)) assert.equal(r.status, 200);
    assert.ok(await waitFor(() => srv.concurrent("conc") === 0));
    assert.equal(srv.peakConcurrent("conc"), 5);
    assert.equal(srv.peakConcurrent("conc/3/1/0"), 1);
    assert.equal(srv.peakConcurrent("conc2"), 1);
    assert.ok(srv.peakConcurrent() >= 6);
    const end = await (await fetch(`${srv.url}/count?run=conc`)).json();
    assert.deepEqual(end, { requests: 5, aborted: 0, concurrent: 0, peakConcurrent: 5 });
    const all = await (await fetch(`${srv.url}/count`)).json();
    assert.equal(all.concurrent, srv.concurrent());
    assert.equal(all.peakConcurrent, srv.peakConcurrent());
    // Sequential requests never overlap.
    for (let i = 0; i < 3; i++) await get(`${srv.url}/tile/3/${i}/0.png?run=seq`);
    assert.equal(srv.peakConcurrent("seq"), 1);
    const e = srv.log.find((x) => x.key === "conc/3/0/0");
    assert.equal(e.status, 200);
    assert.ok(e.tDone - e.t >= 290, `open ${e.tDone - e.t} ms`);
  });

  test("a hanging request is open until the client aborts; a reset until the server cuts it", async () => {
    await assert.rejects(fetch(`${srv.url}/tile/1/1/1.png?run=conch&f=hang`, { signal: AbortSignal.timeout(150) }));
    assert.equal(srv.peakConcurrent("conch"), 1);
    assert.ok(await waitFor(() => srv.concurrent("conch") === 0), "closed after the abort");
    await assert.rejects(async () => {
      const r = await fetch(`${srv.url}/tile/1/1/1.png?run=concr&f=reset`);
      await r.arrayBuffer();
    });
    assert.ok(await waitFor(() => srv.concurrent("concr") === 0), "closed after the reset");
    assert.equal(srv.log.find((x) => x.key === "conch/1/1/1").status, null, "hang: no status");
    assert.equal(srv.log.find((x) => x.key === "concr/1/1/1").status, null, "reset: no status");
  });

  test("outage(run, ms): 503 'outage' without Retry-After whatever f says, only for that run, then normal", async () => {
    const { start, end } = srv.outage("out", 400);
    assert.ok(end - start === 400 && Math.abs(srv.now() - start) < 50);
    const during = [
      await get(`${srv.url}/tile/2/0/0.png?run=out`),
      await get(`${srv.url}/tile/2/0/1.png?run=out&f=404`),
      await get(`${srv.url}/tile/2/0/2.png?run=out&f=429&ra=5`),
      await get(`${srv.url}/tile/2/0/3.png?run=out&f=bucket&rate=1&burst=1`),
    ];
    for (const r of during) {
      assert.equal(r.status, 503);
      assert.equal(r.body.toString(), "outage");
      assert.equal(r.headers.get("retry-after"), null);
      assert.equal(r.headers.get("x-fault"), "outage");
    }
    const other = await get(`${srv.url}/tile/2/0/0.png?run=outx`);
    assert.equal(other.status, 200, "another run (even one starting with the same letters) is not affected");
    await sleep(Math.max(0, end - srv.now()) + 10);
    const after1 = await get(`${srv.url}/tile/2/0/0.png?run=out`);
    assert.equal(after1.status, 200);
    assert.ok(after1.body.equals(tilePng(2, 0, 0)));
    const bucketAfter = await get(`${srv.url}/tile/2/0/3.png?run=out&f=bucket&rate=1&burst=1`);
    assert.equal(bucketAfter.status, 200, "the outage took no bucket token");
    const entries = srv.log.filter((x) => x.key.startsWith("out/"));
    assert.deepEqual(
      entries.map((x) => x.status),
      [503, 503, 503, 503, 200, 200],
    );
    assert.deepEqual(
      entries.map((x) => x.fault),
      ["outage", "outage", "outage", "outage", "none", "bucket"],
    );
    for (const x of entries.slice(0, 4)) assert.ok(x.t >= start && x.t < end, `t ${x.t} in [${start}, ${end})`);
    for (const x of entries.slice(4)) assert.ok(x.t >= end);
    assert.equal(srv.requests("out"), 6, "outage answers are counted as requests");
  });

  test("outage(run, ms, {status: 429, retryAfter: 1}): a rate limiter refusing everything for a while", async () => {
    const { end } = srv.outage("out429", 300, { status: 429, retryAfter: 1 });
    const during = await get(`${srv.url}/tile/2/1/0.png?run=out429`);
    assert.equal(during.status, 429);
    assert.equal(during.headers.get("retry-after"), "1");
    assert.equal(during.headers.get("x-fault"), "outage");
    await sleep(Math.max(0, end - srv.now()) + 10);
    assert.equal((await get(`${srv.url}/tile/2/1/0.png?run=out429`)).status, 200);
    assert.throws(() => srv.outage("x", 10, { status: 200 }), /status must be 400–599/);
  });

  test("outage of one tile key only; reset() ends outages", async () => {
    srv.outage("outk/1/0/0", 5000);
    assert.equal((await get(`${srv.url}/tile/1/0/0.png?run=outk`)).status, 503);
    assert.equal((await get(`${srv.url}/tile/1/0/1.png?run=outk`)).status, 200);
    const other = await startFaultServer();
    try {
      other.outage("r", 5000);
      assert.equal((await get(`${other.url}/tile/1/0/0.png?run=r`)).status, 503);
      other.reset();
      assert.equal((await get(`${other.url}/tile/1/0/0.png?run=r`)).status, 200);
    } finally {
      await other.close();
    }
  });

  test("bucket, stated=1: every answer states the policy and what is left (RateLimit-Policy, RateLimit)", async () => {
    const url = (i) => `${srv.url}/tile/5/${i}/1.png?run=bks&f=bucket&rate=2&burst=2&ra=1&stated=1`;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await get(url(i)));
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 200, 429],
    );
    for (const r of answers) assert.equal(r.headers.get("ratelimit-policy"), '"tiles";q=2;w=1');
    assert.deepEqual(
      answers.map((r) => r.headers.get("ratelimit")),
      ['"tiles";r=1;t=1', '"tiles";r=0;t=1', '"tiles";r=0;t=1'],
    );
    assert.equal(answers[2].headers.get("retry-after"), "1", "Retry-After with the statement");
    const plain = await get(`${srv.url}/tile/5/0/1.png?run=bkp&f=bucket&rate=2&burst=2`);
    assert.equal(plain.headers.get("ratelimit"), null, "without stated=1, nothing stated");
    assert.deepEqual(bucketStatement({ tokens: 5, rate: 5, burst: 5 }), { "RateLimit-Policy": '"tiles";q=5;w=1', RateLimit: '"tiles";r=5;t=0' });
  });

  test("window, stated=1: q requests per fixed window, then 429 until it ends; each answer states r and t", async () => {
    const url = (i) => `${srv.url}/tile/5/${i}/2.png?run=win&f=window&q=2&w=1&stated=1`;
    const answers = [];
    for (let i = 0; i < 3; i++) answers.push(await get(url(i)));
    assert.deepEqual(
      answers.map((r) => r.status),
      [200, 200, 429],
    );
    assert.deepEqual(
      answers.map((r) => r.headers.get("x-fault")),
      ["window", "window", "window-429"],
    );
    for (const r of answers) assert.equal(r.headers.get("ratelimit-policy"), '"tiles";q=2;w=1');
    assert.deepEqual(
      answers.map((r) => r.headers.get("ratelimit")),
      ['"tiles";r=1;t=1', '"tiles";r=0;t=1', '"tiles";r=0;t=1'],
    );
    assert.equal(answers[2].headers.get("retry-after"), "1", "until the window ends");
    // Nothing comes back within the window; the next window has the whole quota.
    assert.equal((await get(url(3))).status, 429);
    await new Promise((r) => setTimeout(r, 1000));
    const next = await get(url(4));
    assert.equal(next.status, 200);
    assert.equal(next.headers.get("ratelimit"), '"tiles";r=1;t=1');
    // The arithmetic, on a clock: a window's quota is spent, then refused until it ends.
    const win = { start: 0, quota: 2, windowMs: 2000, window: 0, used: 0 };
    assert.deepEqual(
      [0, 10, 1900, 2000].map((t) => takeWindowRequest(win, t)),
      [
        { ok: true, endsInMs: 2000 },
        { ok: true, endsInMs: 1990 },
        { ok: false, endsInMs: 100 },
        { ok: true, endsInMs: 2000 },
      ],
    );
    // A start where `start + 1000 - start` is not 1000 in doubles: the first request still
    // states the whole window, one second.
    const odd = { start: 901.5987896752175, quota: 2, windowMs: 1000, window: 0, used: 0 };
    const first = takeWindowRequest(odd, odd.start);
    assert.deepEqual(first, { ok: true, endsInMs: 1000 });
    assert.equal(windowStatement(odd, first.endsInMs).RateLimit, '"tiles";r=1;t=1');
  });

  test("bucket: burst tokens at first, then rate per second; 429 + Retry-After from ra when empty", async () => {
    // 2 tokens a second: the wall-clock checks below have hundreds of ms of slack on a loaded machine.
    const url = (run, i) => `${srv.url}/tile/5/${i}/0.png?run=${run}&f=bucket&rate=2&burst=3&ra=1`;
    const first = [];
    for (let i = 0; i < 5; i++) first.push(await get(url("bk", i)));
    assert.deepEqual(
      first.map((r) => r.status),
      [200, 200, 200, 429, 429],
    );
    assert.ok(first[0].body.equals(tilePng(5, 0, 0)));
    assert.equal(first[0].headers.get("retry-after"), null);
    assert.equal(first[3].headers.get("retry-after"), "1");
    assert.equal(first[3].headers.get("x-fault"), "bucket-429");
    assert.equal(first[0].headers.get("x-fault"), "bucket");
    // Another run has its own, full bucket.
    assert.equal((await get(url("bk2", 0))).status, 200);
    // Refilled continuously at 2/s: ~2.2 tokens after 1.1 s (a third only past 1.5 s).
    await sleep(1100);
    const second = [];
    for (let i = 0; i < 3; i++) second.push((await get(url("bk", 10 + i))).status);
    assert.deepEqual(second, [200, 200, 429]);
    const log = srv.log.filter((x) => x.key.startsWith("bk/"));
    assert.deepEqual(
      log.map((x) => x.status),
      [200, 200, 200, 429, 429, 200, 200, 429],
    );
    assert.deepEqual(log.map((x) => x.fault).slice(0, 4), ["bucket", "bucket", "bucket", "bucket-429"]);
    // The arithmetic, on a clock: refilled at the rate, never above burst.
    const bucket = { tokens: 0, last: 0, rate: 10, burst: 3 };
    assert.deepEqual(
      [50, 100, 220, 10_000, 10_000, 10_000, 10_000].map((t) => takeBucketToken(bucket, t)),
      [false, true, true, true, true, true, false],
    );
    // No ra -> no Retry-After.
    await get(`${srv.url}/tile/5/0/0.png?run=bkn&f=bucket&rate=1&burst=1`);
    const r = await get(`${srv.url}/tile/5/0/1.png?run=bkn&f=bucket&rate=1&burst=1`);
    assert.equal(r.status, 429);
    assert.equal(r.headers.get("retry-after"), null);
  });

  test("bucket under load: about burst + rate x seconds are served", async () => {
    const served = [];
    const t0 = performance.now();
    // 1 s of 4 parallel clients hammering a 50/s, burst 20 bucket.
    await Promise.all(
      Array.from({ length: 4 }, async (_, c) => {
        for (let i = 0; performance.now() - t0 < 1000; i++) {
          const r = await get(`${srv.url}/tile/6/${c}/${i}.png?run=bkload&f=bucket&rate=50&burst=20`);
          if (r.status === 200) served.push(r.status);
          else assert.equal(r.status, 429);
        }
      }),
    );
    // What the bucket could give between the first request's arrival and the last one's, by the
    // server's clock: a stall of this loaded process before or after them gives no tokens.
    const arrivals = srv.log.filter((e) => e.key.startsWith("bkload/")).map((e) => e.t);
    const want = 20 + (50 * (Math.max(...arrivals) - Math.min(...arrivals))) / 1000;
    assert.ok(served.length <= want + 1 && served.length >= want - 10, `served ${served.length}, expected ~${want.toFixed(0)}`);
  });

  test("reset() clears concurrency (open requests are forgotten, never negative) and buckets", async () => {
    const other = await startFaultServer();
    try {
      const p = get(`${other.url}/tile/1/0/0.png?run=r&delay=200`);
      assert.ok(await waitFor(() => other.concurrent("r") === 1));
      other.reset();
      assert.equal(other.concurrent("r"), 0);
      assert.equal(other.peakConcurrent("r"), 0);
      assert.equal(other.concurrent(), 0);
      await p;
      await sleep(20);
      assert.equal(other.concurrent("r"), 0);
      assert.equal(other.concurrent(), 0);
      assert.equal(other.peakConcurrent(), 0);
      const bk = `${other.url}/tile/1/0/0.png?run=b&f=bucket&rate=1&burst=1`;
      assert.equal((await get(bk)).status, 200);
      assert.equal((await get(bk)).status, 429);
      other.reset();
      assert.equal((await get(bk)).status, 200, "reset refills (drops) the buckets");
    } finally {
      await other.close();
    }
  });
});

describe("lifecycle", () => {
  test("close() ends hanging sockets and resolves promptly", async () => {
    const srv = await startFaultServer();
    const pending = rawGet(`${srv.url}/tile/1/1/1.png?run=h&f=hang`, { agent: new http.Agent({ keepAlive: true }) });
    const pending2 = fetch(`${srv.url}/tile/1/1/2.png?run=h&f=hang`).then(
      () => "resolved",
      () => "rejected",
    );
    assert.ok(await waitFor(() => srv.requests("h") === 2));
    const t = performance.now();
    await srv.close();
    assert.ok(performance.now() - t < 500, "close is prompt");
    const r = await pending;
    assert.ok(r.error, "hanging client sees an error");
    assert.equal(await pending2, "rejected");
    assert.equal(srv.aborted("h"), 0, "server close is not a client abort");
    assert.deepEqual(
      srv.log.map((e) => e.outcome),
      ["server-closed", "server-closed"],
    );
    await assert.rejects(fetch(`${srv.url}/health`));
  });

  test("reset() clears counters and log", async () => {
    const srv = await startFaultServer();
    try {
      await (await fetch(`${srv.url}/tile/1/1/1.png?run=r`)).arrayBuffer();
      assert.equal(srv.requests(), 1);
      srv.reset();
      assert.equal(srv.requests(), 0);
      assert.equal(srv.log.length, 0);
      const r = await fetch(`${srv.url}/tile/1/1/1.png?run=r&f=503&n=1`);
      assert.equal(r.status, 503, "attempt counter restarted");
      await r.arrayBuffer();
    } finally {
      await srv.close();
    }
  });

  test("refuses non-loopback hosts", async () => {
    await assert.rejects(startFaultServer({ host: "0.0.0.0" }), /loopback/);
  });

  for (const how of ["SIGTERM", "stdin end"]) {
    test(`CLI prints FAULT_SERVER_URL first and stops on ${how}`, async () => {
      const child = spawn(process.execPath, [SERVER_FILE, "--port", "0", "--seed", "3"], { stdio: ["pipe", "pipe", "inherit"] });
      let out = "";
      child.stdout.setEncoding("utf8");
      const firstLine = await new Promise((resolve, reject) => {
        child.stdout.on("data", (d) => {
          out += d;
          if (out.includes("\n")) resolve(out.split("\n")[0]);
        });
        child.on("exit", (c) => reject(new Error(`exited ${c}`)));
      });
      const m = /^FAULT_SERVER_URL=(http:\/\/127\.0\.0\.1:\d+)$/.exec(firstLine);
      assert.ok(m, firstLine);
      const r = await fetch(`${m[1]}/tile/1/0/0.png`);
      assert.ok(Buffer.from(await r.arrayBuffer()).equals(tilePng(1, 0, 0)));
      const exited = once(child, "exit");
      if (how === "SIGTERM") child.kill("SIGTERM");
      else child.stdin.end();
      const [code] = await exited;
      assert.equal(code, 0);
    });
  }

  test("CLI keeps running when stdin is /dev/null (background use)", async () => {
    const child = spawn(process.execPath, [SERVER_FILE], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      const line = await new Promise((resolve) => child.stdout.once("data", (d) => resolve(String(d).split("\n")[0])));
      const url = line.replace("FAULT_SERVER_URL=", "");
      await sleep(300);
      assert.equal(child.exitCode, null, "still running");
      assert.equal(await (await fetch(`${url}/health`)).text(), "ok");
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      await exited;
    }
  });
});
