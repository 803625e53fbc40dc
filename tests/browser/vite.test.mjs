// The published package in a Vite app: `npm pack` pkg/, install the tarball into a throwaway app,
// `vite build` it (through vite's JS API, from the repo's node_modules) and load the result in
// Chromium. Proves the `browser` export condition, Vite's handling of
// `new URL("./gen/tilefetch_bg.wasm", import.meta.url)` (emitted as an asset) and top-level await
// surviving the bundle. A second test loads the same app from Vite's dev server (dependency
// pre-bundling moves the package's JS; the .wasm URL must still resolve).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { build, createServer, createLogger } from "vite";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { installPacked } from "../packed.mjs";
import { ROOT, assertBuilt, startStaticServer, launchBrowser, newCheckedPage, failedLoadFrom, pageResults, screenshot } from "./helpers.mjs";

let srv;
let tmp;
let app; // the throwaway Vite app, with tilefetch installed from the packed tarball
let web;
let devServer;
let browser;

before(async () => {
  assertBuilt();
  srv = await startFaultServer({ seed: 1 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-vite-"));
  // In parallel; a browser that launched is kept (for after()) even when the install failed.
  const [made, launched] = await Promise.allSettled([makeApp(tmp), launchBrowser()]);
  if (launched.status === "fulfilled") browser = launched.value;
  for (const r of [made, launched]) if (r.status === "rejected") throw r.reason;
  app = made.value;
});
after(async () => {
  await browser?.close();
  await devServer?.close();
  await web?.close();
  await srv?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const INDEX_HTML = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>tilefetch: Vite build</title>
  <link rel="icon" href="data:,">
  <style>body { font: 14px/1.4 system-ui, sans-serif; margin: 16px; } img { width: 64px; height: 64px; }</style>
  <script>
    window.__fail = (what) => { window.__results ??= { error: String(what) }; document.title = "FAILED"; };
    window.addEventListener("error", (e) => window.__fail(e.error?.stack ?? e.message));
    window.addEventListener("unhandledrejection", (e) => window.__fail(e.reason?.stack ?? e.reason));
  </script>
</head>
<body>
  <h1>tilefetch in a Vite build</h1>
  <p id="status">loading…</p>
  <ul id="out"></ul>
  <script type="module" src="/main.js"></script>
</body>
</html>
`;

const MAIN_JS = `import { fetchTile, TileError } from "tilefetch";
import { summarize } from "./summarize.mjs";

const params = new URLSearchParams(location.search);
const server = params.get("server");
const run = params.get("run");
const FAST = { baseDelayMs: 10, maxDelayMs: 40 };

const [healthy, flaky, notFound] = await Promise.all([
  summarize(fetchTile, TileError, \`\${server}/tile/7/20/30.png?run=\${run}\`),
  summarize(fetchTile, TileError, \`\${server}/tile/7/20/31.png?run=\${run}&f=503&n=2\`, FAST),
  summarize(fetchTile, TileError, \`\${server}/tile/7/20/32.png?run=\${run}&f=404\`, FAST),
]);

const out = document.getElementById("out");
for (const [name, r] of Object.entries({ healthy, flaky, notFound })) {
  const li = document.createElement("li");
  li.textContent = r.ok ? \`\${name}: \${r.status}, \${r.length} bytes, \${r.attempts} attempt(s) \` : \`\${name}: \${r.name} \${r.kind} \${r.status}\`;
  if (r.ok) {
    const img = document.createElement("img");
    img.src = URL.createObjectURL(new Blob([new Uint8Array(r.hex.match(/../g).map((h) => parseInt(h, 16)))], { type: "image/png" }));
    await img.decode();
    li.append(img);
  }
  out.append(li);
}
document.getElementById("status").textContent = "done";
window.__results = { cases: { healthy, flaky, notFound } };
`;

/** The throwaway app: the packed tilefetch installed, plus the page and its script. */
async function makeApp(dir) {
  const { project: app } = await installPacked(dir, "tilefetch-vite-app");
  fs.writeFileSync(path.join(app, "index.html"), INDEX_HTML);
  fs.writeFileSync(path.join(app, "main.js"), MAIN_JS);
  fs.copyFileSync(path.join(ROOT, "tests/browser/fixtures/summarize.mjs"), path.join(app, "summarize.mjs"));
  return app;
}

test("vite build → static dist/ → Chromium fetches tiles", { timeout: 60_000 }, async (t) => {
  // 1. vite build (no config file; es2022 so top-level await is allowed)
  const warnings = [];
  const logger = createLogger("warn", { allowClearScreen: false });
  const warn = logger.warn;
  logger.warn = (msg, opts) => {
    warnings.push(msg);
    warn(msg, opts);
  };
  const outDir = path.join(app, "dist");
  const result = await build({
    root: app,
    configFile: false,
    logLevel: "warn",
    customLogger: logger,
    build: { target: "es2022", outDir, emptyOutDir: true },
  });
  const outputs = (Array.isArray(result) ? result : [result]).flatMap((r) => r.output);
  const names = outputs.map((o) => o.fileName);
  t.diagnostic(`vite output: ${names.join(", ")}`);
  for (const w of warnings) t.diagnostic(`vite warning: ${w}`);
  const wasmAssets = names.filter((n) => n.endsWith(".wasm"));
  assert.ok(wasmAssets.length >= 1, `the .wasm is emitted as an asset: ${names.join(", ")}`);
  const js = outputs
    .filter((o) => o.type === "chunk")
    .map((o) => o.code)
    .join("\n");
  assert.ok(!js.includes("node:fs"), "the node entry (pkg/node.js) was not bundled");
  // pkg/workerd.js imports the edge build's .wasm as a module; a bundle that took it would carry
  // that import (or the edge build's own exports).
  assert.ok(!/from\s*["'][^"']*_bg\.wasm["']/.test(js), "the workerd entry (pkg/workerd.js) was not bundled: no .wasm imported as a module");
  assert.ok(!js.includes("UpstreamGateState"), "the edge build (pkg/gen/tilefetch_edge.js) was not bundled");
  assert.ok(
    wasmAssets.some((w) => js.includes(path.basename(w))),
    "the bundle refers to the emitted .wasm",
  );

  // 2. serve dist/ and load it in Chromium
  web = await startStaticServer(outDir, { allow: ["/"], index: true });
  const responses = await openApp(`${web.url}/`, "vite-build", "browser-vite-build");
  const wasmResponses = responses.filter((r) => r.includes(".wasm"));
  assert.ok(
    web.served.some((p) => p.endsWith(".wasm")),
    `the page fetched the emitted .wasm: ${web.served.join(", ")}`,
  );
  assert.equal(wasmResponses.length, 1, `one .wasm fetched: ${wasmResponses.join(", ")}`);
});

test("vite dev server (dependency pre-bundling) → Chromium fetches tiles", { timeout: 60_000 }, async (t) => {
  devServer = await createServer({
    root: app,
    configFile: false,
    logLevel: "warn",
    clearScreen: false,
    server: { host: "127.0.0.1", port: 0, strictPort: false, watch: null },
  });
  await devServer.listen();
  const url = devServer.resolvedUrls.local[0];
  const responses = await openApp(url, "vite-dev", "browser-vite-dev");
  assert.ok(
    responses.some((r) => r.includes("/node_modules/.vite/deps/tilefetch.js")),
    `tilefetch was served pre-bundled: ${responses.join(", ")}`,
  );
  const wasmResponses = responses.filter((r) => r.includes(".wasm"));
  t.diagnostic(`dev server .wasm: ${wasmResponses.join(", ")}`);
  assert.equal(wasmResponses.length, 1, `one .wasm fetched: ${wasmResponses.join(", ")}`);
  assert.match(wasmResponses[0], /^200 application\/wasm /);
});

/**
 * Opens the app at `url` (fault server and run passed in the query string), screenshots it, and
 * asserts what main.js reported. Returns the responses the page saw from `url`'s origin, as
 * "status content-type url".
 */
async function openApp(url, run, shot) {
  const page = await newCheckedPage(browser, { expectedConsoleError: failedLoadFrom(srv.url) });
  const responses = [];
  const origin = new URL(url).origin;
  page.on("response", (r) => {
    if (r.url().startsWith(`${origin}/`)) responses.push(`${r.status()} ${r.headers()["content-type"]} ${r.url()}`);
  });
  try {
    await page.goto(`${url}?${new URLSearchParams({ server: srv.url, run })}`);
    const results = await pageResults(page);
    await screenshot(page, shot);
    assert.equal(results.error, undefined, `the page failed: ${results.error}\n${page.problems().join("\n")}`);

    const { healthy, flaky, notFound } = results.cases;
    for (const [r, xyz, attempts] of [
      [healthy, [7, 20, 30], 1],
      [flaky, [7, 20, 31], 3],
    ]) {
      assert.ok(r.ok, `expected a tile, got ${JSON.stringify(r)}`);
      const truth = tilePng(...xyz);
      assert.equal(r.length, truth.length, "byte length");
      assert.equal(r.hex, truth.toString("hex"), "every byte");
      assert.equal(r.status, 200);
      assert.equal(r.attempts, attempts);
    }
    assert.equal(notFound.ok, false, JSON.stringify(notFound));
    assert.equal(notFound.instanceofTileError, true, "instanceof TileError");
    assert.equal(notFound.kind, "http");
    assert.equal(notFound.status, 404);
    assert.equal(srv.requests(run), 1 + 3 + 1);
    assert.deepEqual(page.problems(), [], "no unexpected page errors or console errors");
    return responses;
  } finally {
    await page.closeContext();
  }
}
