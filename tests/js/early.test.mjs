// The browser entry's calls made before the module is ready send their first request at once
// (src/web/lazy.js, `sendEarly` in src/web/transport.js) unless an option holds it back or only
// the core can make it (LATE_OPTIONS). Every option of the registry is one or the other: a new
// option fails here until someone has said which. Then which attempt takes an early request
// (`fetchWhole`), with a stub fetch; tests/browser/page.test.mjs runs the whole path in a page.
import { test } from "node:test";
import assert from "node:assert/strict";
import { FETCH_TILE_OPTIONS } from "../../pkg/gen/options.js";
import { LATE_OPTIONS } from "../../src/web/lazy.js";
import { buildRequest } from "../../src/web/request.js";
import { fetchWhole, sendEarly } from "../../src/web/transport.js";

// Options that leave the first request as `buildRequest` makes it of the call's URL and fields
// (the fields themselves among them: the early request sends them too).
const SENT_AS_IS = [
  "preset",
  "baseDelayMs",
  "maxDelayMs",
  "attemptTimeoutMs",
  "deadlineMs",
  "jitter",
  "jitterMs",
  "retryAfterMaxMs",
  "retryOn",
  "emptyOn",
  "accept",
  "headers",
  "credentials",
  "mode",
  "referrerPolicy",
  "cache",
  "signal",
  "onRetry",
  "subdomains",
  "maxAgeS",
  "hedge",
  "fetch",
  "maxBytes",
  "whenAbandoned",
];

test("every fetchTile option either leaves the early request as the core sends it, or holds it back", () => {
  for (const name of LATE_OPTIONS) assert.ok(FETCH_TILE_OPTIONS.includes(name), `${name} is no fetchTile option`);
  const classified = new Set([...SENT_AS_IS, ...LATE_OPTIONS]);
  assert.equal(classified.size, SENT_AS_IS.length + LATE_OPTIONS.length, "an option on both lists");
  assert.deepEqual(
    FETCH_TILE_OPTIONS.filter((name) => !classified.has(name)),
    [],
    "options of the registry that src/web/lazy.js has not classified",
  );
  assert.deepEqual(
    [...classified].filter((name) => !FETCH_TILE_OPTIONS.includes(name)),
    [],
    "names the registry does not have",
  );
});

/** A stub fetch that records what it was asked and answers each request at once. */
function stubFetch() {
  const asked = [];
  const fetch = (input, init) => {
    const headers = new Headers(init?.headers ?? (typeof input === "string" ? undefined : input.headers));
    asked.push({ url: typeof input === "string" ? input : input.url, headers: Object.fromEntries(headers), signal: init.signal });
    return Promise.resolve(new Response(new Uint8Array([asked.length]), { headers: { "content-type": "image/png" } }));
  };
  return { fetch, asked };
}

const URL_A = "https://tiles.invalid/1/0/0.png";
const built = (headers, fields = "", custom = undefined) => buildRequest(URL_A, headers, fields, custom, 1 << 20);
const attempt = (request, { bust = false, hedge = false } = {}) => fetchWhole(request, 0, new AbortController().signal, bust, hedge);

test("an attempt takes the early request that sent what it sends, once; any other sends its own", async () => {
  const { fetch, asked } = stubFetch();
  const other = stubFetch();
  const cases = [
    ["the same request", built(undefined), {}, true],
    ["other headers", built({ "accept-language": "fr" }), {}, false],
    ["another field", built(undefined, "cache=no-store"), {}, false],
    ["another fetch", built(undefined, "", other.fetch), {}, false],
    ["a hedge (past the HTTP cache)", built(undefined), { hedge: true }, false],
    ["a cache-busting attempt", built(undefined), { bust: true }, false],
  ];
  for (const [what, request, how, taken] of cases) {
    asked.length = 0;
    other.asked.length = 0;
    const release = sendEarly(built(undefined, "", fetch), undefined);
    assert.ok(release, what);
    const fetched = await attempt({ ...request, custom: request.custom ?? fetch }, how);
    assert.equal(fetched.early, taken, `${what}: taken`);
    assert.equal(asked.length + other.asked.length, taken ? 1 : 2, `${what}: requests sent`);
    release();
    // Taken once: a second attempt sends its own.
    if (taken) assert.equal((await attempt({ ...request, custom: fetch })).early, false, `${what}: taken twice`);
  }
});

test("an early request belongs to its caller's signal until an attempt takes it, then to the attempt's", async () => {
  const { fetch, asked } = stubFetch();
  const request = built(undefined, "", fetch);
  // Aborted before any attempt: gone, and an identical call sends a new one.
  const caller = new AbortController();
  const release = sendEarly(request, caller.signal);
  caller.abort();
  assert.equal(asked[0].signal.aborted, true, "the caller's abort aborts it");
  assert.equal((await attempt(request)).early, false, "an aborted early request is not taken");
  const again = sendEarly(request, undefined);
  assert.ok(again, "an identical call after the abort sends its own");
  again();
  release();
  // Taken: the caller's abort no longer reaches it; the call's release does not abort it.
  asked.length = 0;
  const second = new AbortController();
  const releaseSecond = sendEarly(request, second.signal);
  const fetched = await attempt(request);
  assert.equal(fetched.early, true);
  second.abort();
  releaseSecond();
  assert.equal(asked[0].signal.aborted, false, "taken: the caller's signal and release leave it alone");
  // Not taken by the time its call settles: aborted.
  const third = sendEarly(built(undefined, "mode=cors", fetch), undefined);
  assert.equal(sendEarly(built(undefined, "mode=cors", fetch), undefined), null, "one early request per URL");
  third();
  assert.equal(asked.at(-1).signal.aborted, true, "released untaken: aborted");
});
