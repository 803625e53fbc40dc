// The map-view bench's CPU-profile summary (bench/cpu-profile.mjs): a CDP profile's busy time and
// heaviest functions, from recorded data.
import assert from "node:assert/strict";
import { test } from "node:test";
import { summary } from "../../bench/cpu-profile.mjs";

const frame = (functionName, url = "", lineNumber = -1, columnNumber = -1) => ({ functionName, url, lineNumber, columnNumber, scriptId: "0" });

test("a profile's busy time leaves idle out; each sample counts until the next one, the last until the end", () => {
  const profile = {
    nodes: [
      { id: 1, callFrame: frame("(root)") },
      { id: 2, callFrame: frame("(idle)") },
      { id: 3, callFrame: frame("(program)") },
      { id: 4, callFrame: frame("fetchWhole", "http://127.0.0.1:1/pkg/gen/tilefetch.js?v=1", 3, 40) },
      { id: 5, callFrame: frame("", "http://127.0.0.1:1/page.js", 0, 7) },
    ],
    startTime: 0,
    endTime: 1300,
    // Samples at 0, 100, 200, 300, 600, 800, 900 and 1000 µs; the last one busy until the end.
    samples: [2, 4, 4, 3, 5, 4, 2, 4],
    timeDeltas: [0, 100, 100, 100, 300, 200, 100, 100],
  };
  const { busyMs, top } = summary(profile);
  assert.equal(busyMs, 1.1);
  // Lines and columns 1-based, as an editor shows them (CDP's are 0-based).
  assert.deepEqual(top, [
    { fn: "fetchWhole tilefetch.js:4:41", ms: 0.6 },
    { fn: "(program)", ms: 0.3 },
    { fn: "(anonymous) page.js:1:8", ms: 0.2 },
  ]);
});
