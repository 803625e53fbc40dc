// The map-view bench's CPU-profile summary (bench/cpu-profile.mjs) and the reproduce command it
// names for a run (bench/report-mapview-platform.mjs): pure functions over recorded data.
import assert from "node:assert/strict";
import { test } from "node:test";
import { summary } from "../../bench/cpu-profile.mjs";
import { commandOf } from "../../bench/report-mapview-platform.mjs";

const frame = (functionName, url = "", lineNumber = -1, columnNumber = -1) => ({ functionName, url, lineNumber, columnNumber, scriptId: "0" });

test("a profile's busy time leaves idle out and ranks functions by self time", () => {
  const profile = {
    nodes: [
      { id: 1, callFrame: frame("(root)") },
      { id: 2, callFrame: frame("(idle)") },
      { id: 3, callFrame: frame("(program)") },
      { id: 4, callFrame: frame("fetchWhole", "http://127.0.0.1:1/pkg/gen/tilefetch.js?v=1", 3, 40) },
      { id: 5, callFrame: frame("", "http://127.0.0.1:1/page.js", 0, 7) },
    ],
    // 100 µs apart, but the idle samples 5 ms each: a thread mostly idle.
    samples: [2, 4, 4, 3, 5, 4, 4, 2],
    timeDeltas: [5000, 100, 100, 300, 200, 100, 100, 5000],
  };
  const { busyMs, top } = summary(profile);
  assert.equal(busyMs, 0.9);
  assert.deepEqual(top, [
    { fn: "fetchWhole tilefetch.js:3:40", ms: 0.4 },
    { fn: "(program)", ms: 0.3 },
    { fn: "(anonymous) page.js:0:7", ms: 0.2 },
  ]);
});

test("a run's command names its server, set-up and platform arm", () => {
  assert.equal(
    commandOf({ server: "mapproxy", protocol: "h1", viewport: "768x512", platformLoader: "worker" }),
    "node bench/mapview.mjs --server mapproxy --libs leaflet --platform-loader worker",
  );
  assert.equal(
    commandOf({ server: "public", protocol: "h2", viewport: "1792x1024", platformLoader: null }),
    "node bench/mapview.mjs --scenarios ok --protocol h2 --viewport 1792x1024",
  );
  // Outputs written before the server was recorded were all the 30–80 ms server's.
  assert.equal(commandOf({ protocol: "h1", viewport: "1792x1024" }), "node bench/mapview.mjs --scenarios ok --viewport 1792x1024");
});
