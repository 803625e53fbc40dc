// What RESULTS.md's map-view sections say of a run (bench/report-mapview.mjs): the command that
// reproduces it.
import assert from "node:assert/strict";
import { test } from "node:test";
import { commandOf } from "../../bench/report-mapview.mjs";

test("a run's command is the one it recorded", () => {
  const command = "node bench/mapview.mjs --server mapproxy --libs leaflet --healthy-rounds 6 --cpu-profile";
  assert.equal(commandOf({ command, server: "mapproxy", protocol: "h1", viewport: "768x512" }), command);
});

test("an output from before runs recorded their command names its server, set-up and platform arm", () => {
  assert.equal(
    commandOf({ server: "mapproxy", protocol: "h1", viewport: "768x512", platformLoader: "worker" }),
    "node bench/mapview.mjs --server mapproxy --libs leaflet --platform-loader worker",
  );
  assert.equal(
    commandOf({ server: "public", protocol: "h2", viewport: "1792x1024", platformLoader: null }),
    "node bench/mapview.mjs --scenarios ok --protocol h2 --viewport 1792x1024",
  );
  // Outputs written before the server was recorded were all the default server's.
  assert.equal(commandOf({ protocol: "h1", viewport: "1792x1024" }), "node bench/mapview.mjs --scenarios ok --viewport 1792x1024");
});
