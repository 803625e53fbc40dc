// Several map-view runs taken as one (bench/pool-mapview.mjs): rounds pair within their run only,
// and runs of other scripts or set-ups are refused.
import assert from "node:assert/strict";
import { test } from "node:test";
import { pooled, poolLines } from "../../bench/pool-mapview.mjs";
import { pairedSteps } from "../../bench/report-mapview.mjs";

const script = [{ action: "open" }, { action: "pan" }];
/** A run of `loader` in `round` whose two steps took `ms` each. */
const run = (loader, round, ms) => ({ lib: "leaflet", loader, scenario: "ok", round, steps: ms.map((completeMs) => ({ completeMs, requests: 1 })) });
const output = (runs, setUp = {}) => ({ script, server: "mapproxy", protocol: "h1", viewport: "768x512", platformLoader: null, ...setUp, runs });

test("rounds pair within their own run", () => {
  // Rounds 0 and 1 of each run: the adapter twice as slow in the first run, as fast in the second.
  const a = output([run("own", 0, [100, 100]), run("tilefetch", 0, [200, 200]), run("own", 1, [100, 100]), run("tilefetch", 1, [200, 200])]);
  const b = output([run("own", 0, [400, 400]), run("tilefetch", 0, [400, 400]), run("own", 1, [400, 400]), run("tilefetch", 1, [400, 400])]);
  const p = pairedSteps(pooled([a, b]), "leaflet");
  assert.deepEqual(p.steps[0].ratios, [2, 2, 1, 1]);
  assert.equal(p.rounds.length, 4);
  assert.match(poolLines([a, b])[0], /^leaflet: 2 runs \(2\.000, 1\.000\); pooled, 4 rounds: median of paired steps 1\.500 /);
});

test("runs of another script or set-up are refused", () => {
  const a = output([run("own", 0, [100, 100]), run("tilefetch", 0, [100, 100])]);
  assert.throws(() => pooled([a, { ...a, script: [{ action: "open" }] }]), /different scripts/);
  assert.throws(() => pooled([a, output(a.runs, { platformLoader: "fetch" })]), /different set-ups/);
  assert.throws(() => pooled([a, output(a.runs, { server: "public" })]), /different set-ups/);
  assert.throws(() => pooled([a, output(a.runs, { cpuProfile: true })]), /different set-ups/);
  assert.throws(() => pooled([]), /no output/);
});
