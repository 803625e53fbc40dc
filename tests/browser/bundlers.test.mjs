// The published package in every common bundler: `npm pack` pkg/, install the tarball into one
// throwaway app (fixtures/bundler-app), build it with webpack, Rspack, Parcel, esbuild and Rollup
// (Vite: vite.test.mjs) through each one's JS API, as its docs show an ordinary production build,
// plus the one step the README's "Bundlers" section gives for esbuild and Rollup, and load each
// output in Chromium: it must fetch a tile and retry a 503. A build without that step must fail
// with a TileError that names the section.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import webpack from "webpack";
import { rspack } from "@rspack/core";
import { Parcel } from "@parcel/core";
import * as esbuild from "esbuild";
import { rollup } from "rollup";
import { nodeResolve } from "@rollup/plugin-node-resolve";
import { importMetaAssets } from "@web/rollup-plugin-import-meta-assets";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { installPacked } from "../packed.mjs";
import { ROOT, assertBuilt, startStaticServer, launchBrowser, newCheckedPage, failedLoadFrom, pageResults } from "./helpers.mjs";

const FIXTURE = path.join(ROOT, "tests/browser/fixtures");

let srv;
let tmp;
let app; // the throwaway app with tilefetch installed from the packed tarball
let browser;
const servers = [];

before(async () => {
  assertBuilt();
  srv = await startFaultServer({ seed: 1 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-bundlers-"));
  const [made, launched] = await Promise.allSettled([installPacked(tmp, "tilefetch-bundler-app"), launchBrowser()]);
  if (launched.status === "fulfilled") browser = launched.value;
  for (const r of [made, launched]) if (r.status === "rejected") throw r.reason;
  app = made.value.project;
  fs.mkdirSync(path.join(app, "src"));
  for (const f of ["index.html", "main.js"]) fs.copyFileSync(path.join(FIXTURE, "bundler-app", f), path.join(app, "src", f));
  fs.copyFileSync(path.join(FIXTURE, "summarize.mjs"), path.join(app, "src", "summarize.mjs"));
});
after(async () => {
  await browser?.close();
  for (const s of servers) await s.close();
  await srv?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** A page for a bundler that emits no HTML: the bundle as a module script, or as a classic one. */
function writePage(outDir, { classic = false } = {}) {
  const html = fs.readFileSync(path.join(FIXTURE, "bundler-app", "index.html"), "utf8");
  const tag = classic ? '<script src="./main.js"></script>' : '<script type="module" src="./main.js"></script>';
  fs.writeFileSync(path.join(outDir, "index.html"), html.replace('<script type="module" src="./main.js"></script>', tag));
}

/** The README's one step for bundlers that leave `new URL(…, import.meta.url)` alone: the .wasm beside the bundle. */
function copyWasm(outDir) {
  fs.mkdirSync(path.join(outDir, "gen"), { recursive: true });
  fs.copyFileSync(path.join(app, "node_modules/tilefetch/gen/tilefetch_bg.wasm"), path.join(outDir, "gen/tilefetch_bg.wasm"));
}

/** webpack and Rspack share their configuration format: no config but the entry and the output. */
function webpackConfig(outDir) {
  return { mode: "production", context: app, entry: "./src/main.js", output: { path: outDir, filename: "main.js" }, infrastructureLogging: { level: "error" } };
}

function runCompiler(compiler) {
  return new Promise((resolve, reject) => {
    compiler.run((err, stats) => {
      compiler.close(() => {});
      if (err) return reject(err);
      if (stats.hasErrors()) return reject(new Error(stats.toString({ all: false, errors: true })));
      resolve(stats);
    });
  });
}

const BUILDS = {
  async webpack(outDir) {
    await runCompiler(webpack(webpackConfig(outDir)));
    writePage(outDir);
  },
  async rspack(outDir) {
    await runCompiler(rspack(webpackConfig(outDir)));
    writePage(outDir);
  },
  async parcel(outDir) {
    const bundler = new Parcel({
      entries: path.join(app, "src/index.html"),
      defaultConfig: fileURLToPath(import.meta.resolve("@parcel/config-default")),
      mode: "production",
      shouldDisableCache: true,
      cacheDir: path.join(app, ".parcel-cache"),
      defaultTargetOptions: { distDir: outDir, publicUrl: "./" },
      logLevel: "error",
    });
    await bundler.run();
  },
  async "esbuild (esm)"(outDir) {
    await esbuild.build({ entryPoints: [path.join(app, "src/main.js")], bundle: true, format: "esm", minify: true, outdir: outDir, logLevel: "error" });
    copyWasm(outDir);
    writePage(outDir);
  },
  async "esbuild (iife, its default format)"(outDir) {
    // esbuild warns that import.meta is empty in this format: pkg/browser.js then looks beside the script.
    await esbuild.build({ entryPoints: [path.join(app, "src/main.js")], bundle: true, minify: true, outdir: outDir, logLevel: "silent" });
    copyWasm(outDir);
    writePage(outDir, { classic: true });
  },
  async rollup(outDir) {
    const bundle = await rollup({
      input: path.join(app, "src/main.js"),
      plugins: [nodeResolve({ browser: true }), importMetaAssets()],
      onwarn: (w) => assert.fail(`rollup warned: ${w.message}`),
    });
    await bundle.write({ dir: outDir, format: "es" });
    await bundle.close();
    writePage(outDir);
  },
};

for (const [name, build] of Object.entries(BUILDS)) {
  test(`${name}: the built app fetches tiles in Chromium`, { timeout: 120_000 }, async (t) => {
    const outDir = path.join(app, `dist-${name.replace(/\W+/g, "-")}`);
    const t0 = performance.now();
    await build(outDir);
    t.diagnostic(`${name} built in ${Math.round(performance.now() - t0)} ms: ${fs.readdirSync(outDir, { recursive: true }).join(", ")}`);
    const { results, web } = await openBuilt(outDir, `bundler-${name}`);
    for (const [r, y, attempts] of [
      [results.healthy, 30, 1],
      [results.flaky, 31, 2],
    ]) {
      assert.ok(r.ok, `${name}: expected a tile, got ${JSON.stringify(r)}`);
      assert.equal(r.hex, tilePng(7, 20, y).toString("hex"), "every byte");
      assert.equal(r.attempts, attempts);
    }
    assert.equal(web.served.filter((p) => p.endsWith(".wasm")).length, 1, `one .wasm fetched: ${web.served.join(", ")}`);
  });
}

test("esbuild without the README's step: every call rejects with a TileError naming the section", { timeout: 60_000 }, async () => {
  const outDir = path.join(app, "dist-esbuild-no-copy");
  await esbuild.build({ entryPoints: [path.join(app, "src/main.js")], bundle: true, format: "esm", outdir: outDir, logLevel: "error" });
  writePage(outDir);
  const { results } = await openBuilt(outDir, "bundler-no-copy", () => true);
  for (const r of [results.healthy, results.flaky]) {
    assert.deepEqual([r.ok, r.instanceofTileError, r.kind, r.attempts], [false, true, "network", 0], JSON.stringify(r));
    assert.match(r.message, /could not load its WebAssembly module from http:\/\/127\.0\.0\.1:\d+\/gen\/tilefetch_bg\.wasm: HTTP 404\./);
    assert.match(r.message, /see "Bundlers" in tilefetch's README/);
  }
});

/** Serves `outDir`, opens its index.html against the fault server, returns the page's results. */
async function openBuilt(outDir, run, expectedConsoleError = failedLoadFrom(srv.url)) {
  const web = await startStaticServer(outDir, { allow: ["/"], index: true });
  servers.push(web);
  const page = await newCheckedPage(browser, { expectedConsoleError });
  try {
    await page.goto(`${web.url}/?${new URLSearchParams({ server: srv.url, run })}`);
    const results = await pageResults(page);
    assert.deepEqual(page.problems(), [], "no page errors");
    return { results, web };
  } finally {
    await page.closeContext();
  }
}
