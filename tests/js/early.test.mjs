// The browser entry's calls made before the module is ready send their first request at once
// (src/web/lazy.js, `sendEarly` in src/web/transport.js) unless an option holds it back or only
// the core can make it (LATE_OPTIONS). Every option of the registry is one or the other: a new
// option fails here until someone has said which (tests/browser/page.test.mjs runs the path).
import { test } from "node:test";
import assert from "node:assert/strict";
import { FETCH_TILE_OPTIONS } from "../../pkg/gen/options.js";
import { LATE_OPTIONS } from "../../src/web/lazy.js";

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
