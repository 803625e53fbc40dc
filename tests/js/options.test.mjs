// fetchTile's argument checking, TileError's shape and URL redaction.
// Runs against the BUILT package (pkg/node.js): build it first.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import { TileClient, TileError } from "../../pkg/node.js";

// Each call on a client of its own: these tests are about one call's retries, and what calls to
// a host share (a pause, the breaker, the budget) is tested in client.test.mjs.
const fetchTile = (url, options) => new TileClient().fetchTile(url, options);
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { FAST, tileUrl, keyOf, rejection, assertTile, sleep } from "./helpers.mjs";

let srv;
before(async () => {
  srv = await startFaultServer({ seed: 1 });
});
after(async () => {
  await srv?.close();
});

describe("exports", () => {
  test("fetchTile is a function and TileError an Error subclass", () => {
    assert.equal(typeof fetchTile, "function");
    assert.equal(typeof TileError, "function");
    assert.ok(TileError.prototype instanceof Error);
  });
});

describe("invalid options", () => {
  const run = "badopts";
  const good = () => tileUrl(srv, run, [1, 0, 0]);
  // [label, () => [url, options], field that the message must name]
  const cases = [
    ["{deadlinems: 1} (wrong case)", () => [good(), { deadlinems: 1 }], "deadlinems"],
    ["{deadlineMs: -1}", () => [good(), { deadlineMs: -1 }], "deadlineMs"],
    ["{deadlineMs: NaN}", () => [good(), { deadlineMs: NaN }], "deadlineMs"],
    ["{deadlineMs: Infinity}", () => [good(), { deadlineMs: Infinity }], "deadlineMs"],
    ['{deadlineMs: "6000"}', () => [good(), { deadlineMs: "6000" }], "deadlineMs"],
    ['{jitter: "fancy"}', () => [good(), { jitter: "fancy" }], "jitter"],
    ['{whenAbandoned: "finish"}', () => [good(), { whenAbandoned: "finish" }], "whenAbandoned"],
    ["{retryOn: [99]}", () => [good(), { retryOn: [99] }], "retryOn"],
    ["{signal: 5}", () => [good(), { signal: 5 }], "signal"],
    ["{onRetry: 3}", () => [good(), { onRetry: 3 }], "onRetry"],
    ['{preset: "turbo"}', () => [good(), { preset: "turbo" }], "preset"],
    ["options 5", () => [good(), 5], "options"],
    ['url "/relative.png" (no base in Node)', () => ["/relative.png", {}], "url"],
    ['url "ftp://x/1.png"', () => ["ftp://x/1.png", {}], "url"],
    ["url 42", () => [42, {}], "url"],
    ["url missing", () => [undefined, {}], "url"],
  ];
  for (const [label, args, field] of cases) {
    test(`${label} -> invalid-options naming ${field}`, async () => {
      const [url, options] = args();
      const err = await rejection(() => fetchTile(url, options), TileError, `fetchTile(${label})`);
      assert.equal(err.kind, "invalid-options", `${err.kind}: ${err.message}`);
      assert.ok(err.message.includes(field), `message ${JSON.stringify(err.message)} should name ${field}`);
      assert.equal(typeof err.attempts, "number");
      assert.equal(err.attempts, 0, "no attempt was made");
    });
  }
  test("no request reached the server for any invalid call", async () => {
    await sleep(50);
    assert.equal(srv.requests(run), 0);
  });
  test("after all of those, a good call still succeeds (the wasm module survived)", async () => {
    const tile = await fetchTile(tileUrl(srv, "after-bad", [1, 0, 0]), FAST);
    assertTile(tile, tilePng(1, 0, 0), { attempts: 1 });
  });
});

describe("valid options are accepted", { concurrency: true }, () => {
  const valid = {
    "no options": undefined,
    "null options": null,
    "empty object": {},
    'preset "batch"': { preset: "batch" },
    'preset "interactive"': { preset: "interactive" },
    "every jitter": null, // expanded below
    "all fields": {
      preset: "interactive",
      baseDelayMs: 10,
      maxDelayMs: 100,
      attemptTimeoutMs: 2000,
      deadlineMs: 3000,
      jitter: "equal",
      jitterMs: 5,
      retryAfterMaxMs: 1000,
      retryOn: [503],
      emptyOn: [204, 404],
      accept: "image/png",
      headers: new Headers({ "X-A": "1" }),
      credentials: "omit",
      mode: "cors",
      referrerPolicy: "no-referrer",
      cache: "no-store",
      signal: new AbortController().signal,
      onRetry: () => {},
    },
    "headers as array of pairs": { headers: [["X-B", "2"]] },
    "undefined fields are ignored": { deadlineMs: undefined, signal: undefined, onRetry: undefined },
  };
  let i = 0;
  for (const [label, options] of Object.entries(valid)) {
    if (label === "every jitter") {
      for (const jitter of ["full", "equal", "decorrelated", "none", "additive"]) {
        const xyz = [2, 3, i++];
        test(`jitter "${jitter}"`, async () => {
          const tile = await fetchTile(tileUrl(srv, `jitter-${jitter}`, xyz, { f: 503, n: 1 }), { ...FAST, jitter, jitterMs: 5 });
          assertTile(tile, tilePng(...xyz), { attempts: 2 });
        });
      }
      continue;
    }
    const xyz = [2, 2, i++];
    test(label, async () => {
      const tile = options === undefined ? await fetchTile(tileUrl(srv, "valid", xyz)) : await fetchTile(tileUrl(srv, "valid", xyz), options);
      assertTile(tile, tilePng(...xyz), { attempts: 1 });
    });
  }
});

describe("TileError", () => {
  test("shape of an http error", async () => {
    const xyz = [3, 3, 3];
    const url = tileUrl(srv, "shape", xyz, { f: 404 });
    const err = await rejection(() => fetchTile(url, FAST), TileError);
    assert.equal(err.name, "TileError");
    assert.equal(err.kind, "http");
    assert.equal(err.status, 404);
    assert.equal(err.attempts, 1);
    assert.equal(typeof err.elapsedMs, "number");
    assert.ok(err.elapsedMs >= 0);
    assert.equal(err.url, url, "nothing secret to redact: url is as given");
    assert.ok(err.message.length > 0);
    assert.ok(err.retryAfterMs === undefined || err.retryAfterMs === null);
  });

  test("redaction: secrets are replaced by *** in url, message and stack", async () => {
    const xyz = [1, 0, 0];
    const run = "redact";
    const url = `${srv.url}/tile/1/0/0.png?run=${run}&f=404&key=SECRET1&access_token=SECRET2&signature=S3&x=1`;
    const err = await rejection(() => fetchTile(url, FAST), TileError);
    assert.equal(err.kind, "http");
    for (const [name, text] of [
      ["url", err.url],
      ["message", err.message],
      ["stack", err.stack],
      ["String()", String(err)],
    ]) {
      for (const secret of ["SECRET1", "SECRET2", "S3"]) {
        assert.ok(!text.includes(secret), `${name} leaks ${secret}: ${text}`);
      }
    }
    for (const [name, text] of [
      ["url", err.url],
      ["message", err.message],
    ]) {
      assert.ok(text.includes("***"), `${name} shows *** : ${text}`);
      assert.ok(text.includes("x=1"), `${name} keeps x=1 : ${text}`);
    }
    assert.equal(srv.requests(keyOf(run, xyz)), 1, "the real URL (with its secrets) was requested");
    assert.ok(srv.log.find((e) => e.key === keyOf(run, xyz)).path.includes("key=SECRET1"));
  });

  test("redaction applies to a deadline error and its cause", async () => {
    const url = `${srv.url}/tile/1/0/1.png?run=redact2&f=503&apikey=SECRET4&token=SECRET5`;
    const err = await rejection(() => fetchTile(url, { ...FAST, deadlineMs: 300 }), TileError);
    assert.ok(["deadline", "circuit-open"].includes(err.kind), err.message);
    assert.equal(err.cause?.kind, "http");
    const texts = [err.url, err.message, err.stack, err.cause?.message ?? "", err.cause?.url ?? "", err.cause?.stack ?? ""];
    for (const t of texts) for (const s of ["SECRET4", "SECRET5"]) assert.ok(!String(t).includes(s), `leaks ${s}: ${t}`);
  });

  test("redaction applies to invalid-options errors about the url", async () => {
    const err = await rejection(() => fetchTile("ftp://host/1.png?token=SECRET6", {}), TileError);
    assert.equal(err.kind, "invalid-options");
    for (const t of [err.url ?? "", err.message, err.stack]) assert.ok(!t.includes("SECRET6"), `leaks: ${t}`);
  });
});

describe("hostile inputs never reach the wasm module as exceptions", () => {
  test("credentials in the URL: invalid-options, redacted, nothing sent", async () => {
    const url = `${srv.url.replace("http://", "http://user:SECRET7@")}/tile/1/0/2.png?run=cred`;
    const err = await rejection(() => fetchTile(url), TileError);
    assert.equal(err.kind, "invalid-options");
    assert.match(err.message, /url/);
    for (const t of [err.message, err.url ?? "", err.stack]) assert.ok(!t.includes("SECRET7"), `leaks: ${t}`);
    assert.equal(srv.requests("cred"), 0);
  });

  test("throwing getters, Proxies and fake signals reject invalid-options; the module survives", async () => {
    const revoked = Proxy.revocable({}, {});
    revoked.revoke();
    const throwing = new Proxy(
      {},
      {
        ownKeys() {
          throw new Error("trap");
        },
      },
    );
    const cases = [
      [
        {
          get deadlineMs() {
            throw new Error("getter");
          },
        },
        "deadlineMs",
      ],
      [revoked.proxy, "options"],
      [throwing, "options"],
      [{ signal: Object.create(AbortSignal.prototype) }, "signal"],
      [
        {
          retryOn: new Proxy([503], {
            get() {
              throw new Error("trap");
            },
          }),
        },
        "retryOn",
      ],
    ];
    for (const [options, field] of cases) {
      const err = await rejection(() => fetchTile(`${srv.url}/tile/1/0/3.png?run=hostile`, options), TileError);
      assert.equal(err.kind, "invalid-options", err.message);
      assert.ok(err.message.includes(field), `${err.message} should name ${field}`);
    }
    const urls = new Proxy([`${srv.url}/tile/1/0/3.png?run=hostile`], {
      get() {
        throw new Error("trap");
      },
    });
    assert.equal((await rejection(() => fetchTile(urls), TileError)).kind, "invalid-options");
    assert.equal(srv.requests("hostile"), 0);
    const tile = await fetchTile(`${srv.url}/tile/1/0/3.png?run=hostile`);
    assert.equal(tile.status, 200);
  });

  test("one host however the URL spells it", async () => {
    const client = new TileClient();
    const upper = srv.url.replace("http://", "HTTP://");
    await client.fetchTile(`${upper}/tile/1/1/0.png?run=spell`);
    await client.fetchTile(`${srv.url}/tile/1/1/1.png?run=spell`);
    assert.deepEqual(Object.keys(client.stats()), [new URL(srv.url).host]);
  });
});

// The JS half of request building (src/web/request.js), called as the Rust half calls it: one URL
// per line, each option by name (undefined when not set), refusals named by URL_REFUSALS.
describe("buildRequest and resolveUrls (src/web/request.js)", async () => {
  const { buildRequest, resolveUrls, URL_REFUSALS } = await import("../../src/web/request.js");
  const refused = (refusal, text) => ({ refusal: URL_REFUSALS[refusal], text });

  test("resolveUrls: templates expand over the labels, hosts come out in the parser's form", () => {
    assert.equal(resolveUrls("https://{s}.Tiles.example:443/1/{s}.png", "a\nb"), "https://a.tiles.example/1/a.png\nhttps://b.tiles.example/1/b.png");
    const labels = Array.from({ length: 20 }, (_, i) => `l${i}`).join("\n");
    assert.equal(resolveUrls("https://{s}.t.example/", labels).split("\n").length, 16);
    assert.equal(resolveUrls(["https://a.example/1", "http://b.example/1"], ""), "https://a.example/1\nhttp://b.example/1");
  });

  test("resolveUrls: what is refused, and why", () => {
    assert.deepEqual(resolveUrls("tiles/1.png", ""), refused("relative", "tiles/1.png"), "relative with no location (Node)");
    assert.deepEqual(resolveUrls("https://exa mple.com/", ""), refused("invalid", "https://exa mple.com/"));
    assert.deepEqual(resolveUrls("ftp://a.example/1", ""), refused("notHttp", "ftp://a.example/1"));
    assert.deepEqual(resolveUrls("https://u:p@a.example/1", ""), refused("credentials", "https://u:p@a.example/1"));
    assert.deepEqual(resolveUrls(["https://a.example/1", "ftp://b.example/"], ""), refused("notHttp", "ftp://b.example/"));
    assert.deepEqual(resolveUrls(5, ""), refused("notStringOrArray", ""));
    assert.deepEqual(resolveUrls([], ""), refused("badList", ""));
    assert.deepEqual(resolveUrls(["https://a.example/1", 7], ""), refused("badList", ""));
    assert.deepEqual(
      resolveUrls(
        new Proxy([], {
          get() {
            throw new Error("trap");
          },
        }),
        "",
      ),
      refused("badList", ""),
    );
    assert.equal(new Set(Object.values(URL_REFUSALS)).size, Object.keys(URL_REFUSALS).length, "one code per refusal");
  });

  // buildRequest(urlLines, headers, fields, custom, maxBytes): `fields` names what the call set,
  // "name=value" per line, as src/web/js_options.rs writes them.
  test("plain URLs stay strings; headers and accept are sent and listed for the flight key", () => {
    const custom = () => {};
    const { inputs, init, headers, refusedField, ...kept } = buildRequest(
      "https://a.example/1\nhttps://b.example/1",
      { "x-key": "1" },
      "accept=image/*\n",
      custom,
      1000,
    );
    assert.equal(refusedField, undefined);
    assert.deepEqual(inputs, ["https://a.example/1", "https://b.example/1"]);
    assert.equal(init.headers.get("accept"), "image/*");
    assert.equal(headers, "accept:image/*;x-key:1;");
    assert.equal("referrerPolicy" in init, false);
    assert.deepEqual(kept, { custom, maxBytes: 1000, ranged: false }, "what fetchWhole takes from the request");
  });

  test("a range is the call's own Range header, over one in the headers, and part of the flight key", () => {
    const { init, headers, ranged } = buildRequest("https://a.example/1", { range: "bytes=0-1" }, "range=bytes=5-9\n");
    assert.equal(init.headers.get("range"), "bytes=5-9");
    assert.equal(headers, "range:bytes=5-9;");
    assert.equal(ranged, true);
    const alone = buildRequest("https://a.example/1", undefined, "range=bytes=0-16383\n");
    assert.deepEqual([alone.init.headers.get("range"), alone.headers], ["bytes=0-16383", "range:bytes=0-16383;"]);
  });

  test('a set field builds a Request per mirror; the referrer policy "" is a value, not absence', () => {
    const { inputs, init, headers } = buildRequest("https://a.example/1", undefined, "referrerPolicy=\n");
    assert.equal(init.referrerPolicy, "");
    assert.ok(inputs[0] instanceof Request);
    assert.equal(headers, "");
  });

  test("a user agent is sent unless the caller's headers have one, and is not part of the flight key", () => {
    const ua = "tilefetch/0.1.0 (+https://www.npmjs.com/package/tilefetch)";
    const plain = buildRequest("https://a.example/1", undefined, `userAgent=${ua}\n`);
    assert.equal(plain.init.headers["user-agent"], ua);
    const own = buildRequest("https://a.example/1", { "User-Agent": "mine" }, `userAgent=${ua}\n`);
    assert.equal(own.init.headers.get("user-agent"), "mine");
    assert.equal(own.headers, "user-agent:mine;");
  });

  test("what the platform refuses comes back as the field and its message", () => {
    const { refusedField, message } = buildRequest("https://a.example/1", undefined, "mode=navigate\n");
    assert.equal(refusedField, "mode");
    assert.match(message, /mode|navigate/i);
    assert.deepEqual(buildRequest("https://a.example/1", 5, ""), { refusedField: "headers", message: "is not a valid headers init" });
    // "'only-if-cached' can be set only with 'same-origin' mode" names a mode the caller never
    // set: the field to blame is among those set.
    assert.equal(buildRequest("https://a.example/1", undefined, "cache=only-if-cached\n").refusedField, "cache");
  });

  test("a field name the request does not know is not sent", () => {
    const { init } = buildRequest("https://a.example/1", undefined, "method=DELETE\n__proto__=x\nnoequals\n");
    assert.deepEqual(Object.keys(init), []);
  });
});
