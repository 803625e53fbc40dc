// The demo page (www/serve.mjs --check): builds the page, starts its tile servers, loads it in
// headless Chromium, waits until the tilefetch map has settled with tiles, saves
// test-output/demo.png and exits 0.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ROOT, OUTPUT_DIR, assertBuilt } from "./helpers.mjs";

test("node www/serve.mjs --check: the demo page shows tiles and saves test-output/demo.png", { timeout: 60_000 }, async (t) => {
  assertBuilt();
  const shot = path.join(OUTPUT_DIR, "demo.png");
  const started = Date.now();
  const child = spawn(process.execPath, ["www/serve.mjs", "--check", "--port", "0"], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (c) => (stdout += c));
  child.stderr.on("data", (c) => (stderr += c));
  const killer = setTimeout(() => child.kill("SIGKILL"), 55_000);
  const code = await new Promise((resolve) => child.on("close", (c) => resolve(c)));
  clearTimeout(killer);
  t.diagnostic(stdout.trim());
  assert.equal(code, 0, `exit code\nstdout: ${stdout}\nstderr: ${stderr}`);
  assert.match(stdout, /^demo check ok \(ol, [\d.]+ s\): tilefetch [1-9]\d* tiles loaded, \d+ failed, 0 pending/m);
  const stat = fs.statSync(shot);
  assert.ok(stat.mtimeMs >= started - 1000, "the screenshot was written by this run");
  assert.ok(stat.size > 10_000, `the screenshot is a real image (${stat.size} B)`);
});
