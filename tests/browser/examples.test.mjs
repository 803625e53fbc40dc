// The map apps in examples/, as a user copies one: the folder alone, `npm install` of its own
// package.json with tilefetch from the packed tarball (not pkg/ by path), `npm run build` where it
// has one, then the page in Chromium with `?tiles=` pointing at the loopback fault server, where
// every tile fails once with 503 before it is served (a map library's own loader would leave it a
// hole). Each example must ask for tiles, get each one on its retry, and show them: pixels of the
// map read from a screenshot have the colours of the tiles served. (examples/worker runs in
// tests/workerd/proxy.test.mjs, from the same tarball.)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFaultServer } from "../server/fault-server.mjs";
import { packTarball, sh } from "../packed.mjs";
import { ROOT, assertBuilt, startStaticServer, launchBrowser, newCheckedPage, failedLoadFrom, screenshot } from "./helpers.mjs";
import { readPixels, tileColour, MAP_W, MAP_H } from "./adapters-common.mjs";

const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const EXAMPLES = [
  { name: "openlayers-vite", serve: "dist" },
  { name: "leaflet", serve: "." },
  { name: "maplibre-vite", serve: "dist", webgl: true },
];

let srv;
let tmp;
let tarball;
let browsers = {};
const servers = [];

before(async () => {
  assertBuilt();
  srv = await startFaultServer({ seed: 1 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-examples-"));
  ({ tarball } = await packTarball(tmp));
  browsers = { plain: await launchBrowser(), webgl: await launchBrowser({ webgl: true }) };
});
after(async () => {
  for (const b of Object.values(browsers)) await b.close();
  for (const s of servers) await s.close();
  await srv?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

for (const example of EXAMPLES) {
  test(`examples/${example.name}: installs from the tarball, builds, and shows its tiles`, { timeout: 180_000 }, async (t) => {
    const app = path.join(tmp, example.name);
    fs.cpSync(path.join(ROOT, "examples", example.name), app, { recursive: true, filter: (src) => !/node_modules|dist/.test(path.basename(src)) });
    const manifest = JSON.parse(fs.readFileSync(path.join(app, "package.json"), "utf8"));
    assert.ok(manifest.dependencies.tilefetch, "the example depends on tilefetch as a user's app does");
    // The registry's versions of the map library and Vite (npm's cache first), the packed tilefetch.
    await sh(NPM, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error", tarball], { cwd: app, timeout: 170_000 });
    const installed = JSON.parse(fs.readFileSync(path.join(app, "node_modules/tilefetch/package.json"), "utf8"));
    assert.equal(installed.version, JSON.parse(fs.readFileSync(path.join(ROOT, "pkg/package.json"), "utf8")).version);
    if (manifest.scripts?.build) await sh(NPM, ["run", "build"], { cwd: app });

    const web = await startStaticServer(path.join(app, example.serve), { allow: ["/"], index: true });
    servers.push(web);
    const run = `example-${example.name}`;
    const tiles = `${srv.url}/tile/{z}/{x}/{y}.png?run=${run}&f=503&n=1`;
    // The fault server's 503s are logged by Chromium, and so is the favicon the examples do not have.
    const fromFaultServer = failedLoadFrom(srv.url);
    const expectedConsoleError = (msg) => fromFaultServer(msg) || msg.location()?.url === `${web.url}/favicon.ico`;
    const page = await newCheckedPage(example.webgl ? browsers.webgl : browsers.plain, { expectedConsoleError });
    try {
      const t0 = Date.now();
      await page.goto(`${web.url}/?${new URLSearchParams({ tiles })}`);
      const keys = await waitForTiles(run);
      t.diagnostic(`${keys.length} tiles, ${srv.requests(run)} requests, settled in ${Date.now() - t0} ms`);
      assert.ok(keys.length >= 4, `the map asked for tiles: ${keys.join(", ")}`);
      for (const key of keys) {
        const answers = srv.log.filter((e) => e.key === key).map((e) => e.status);
        assert.equal(answers[0], 503, `${key}: the first request failed`);
        assert.ok(answers.includes(200), `${key}: retried until served (${answers.join(", ")})`);
      }
      // Pixels on a grid over the map: each has the colour of a tile served (or of its grid lines).
      const colours = keys.flatMap((k) => {
        const base = tileColour(...k.split("/").slice(1).map(Number));
        return [base, base.map((c) => Math.floor(c * 0.55))];
      });
      const points = [];
      for (let x = 64; x < MAP_W; x += 128) for (let y = 64; y < MAP_H; y += 128) points.push({ x, y });
      const pixels = await readPixels(page, points);
      const shot = await screenshot(page, `example-${example.name}`);
      const off = pixels.filter((p) => !colours.some((c) => c.every((v, i) => Math.abs(v - p[i]) <= 6)));
      assert.ok(off.length <= points.length / 10, `${off.length} of ${points.length} pixels have no served tile's colour: ${JSON.stringify(off)} (${shot})`);
      assert.deepEqual(page.problems(), [], "no page errors");
    } finally {
      await page.closeContext();
    }
  });
}

/** Waits until the run's tile requests have been quiet for 750 ms with every tile asked for served; returns the tile keys. */
async function waitForTiles(run, timeout = 20_000) {
  const deadline = Date.now() + timeout;
  let last = -1;
  let quietSince = Date.now();
  for (;;) {
    const entries = srv.log.filter((e) => e.key.startsWith(`${run}/`));
    const keys = [...new Set(entries.map((e) => e.key))];
    const served = keys.every((k) => entries.some((e) => e.key === k && e.status === 200));
    if (entries.length !== last) {
      last = entries.length;
      quietSince = Date.now();
    } else if (keys.length > 0 && served && Date.now() - quietSince >= 750) {
      return keys;
    }
    if (Date.now() > deadline) return keys;
    await new Promise((r) => setTimeout(r, 100));
  }
}
