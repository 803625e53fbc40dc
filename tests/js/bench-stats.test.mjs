// The benches' interval of a median over rounds (bench/stats.mjs), which RESULTS.md prints beside
// the map view's fast-server targets.
import assert from "node:assert/strict";
import { test } from "node:test";
import { bootstrapMedianInterval, median } from "../../bench/stats.mjs";

/** `n` rounds of 6 ratios, spread around 1.05 by a fixed pattern. */
const rounds = (n) => Array.from({ length: n }, (_, r) => Array.from({ length: 6 }, (_, i) => 1.05 + (((r * 7 + i * 3) % 11) - 5) / 50));

test("the same rounds give the same interval, and it holds their median", () => {
  const groups = rounds(12);
  const range = bootstrapMedianInterval(groups);
  assert.deepEqual(bootstrapMedianInterval(groups), range);
  const [low, high] = range;
  const all = median(groups.flat());
  assert.ok(low < all && all < high, `${low} < ${all} < ${high}`);
});

test("more rounds of the same spread narrow the interval", () => {
  const width = (n) => {
    const [low, high] = bootstrapMedianInterval(rounds(n));
    return high - low;
  };
  assert.ok(width(48) < width(4), `${width(48)} < ${width(4)}`);
});

test("rounds that agree give no spread; no rounds give no interval", () => {
  assert.deepEqual(
    bootstrapMedianInterval([
      [1.02, 1.02],
      [1.02, 1.02],
    ]),
    [1.02, 1.02],
  );
  assert.equal(bootstrapMedianInterval([]), null);
  assert.equal(bootstrapMedianInterval([[], []]), null);
});
