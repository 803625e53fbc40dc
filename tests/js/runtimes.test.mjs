// Node, Deno and Bun (the npm packages `deno` and `bun` ship their binaries) run one test body,
// tests/runtimes/body.mjs, in a project where the packed package is installed: `tilefetch`
// resolves through the package's exports in each runtime's own way, and the results must be the
// same in all three, against the loopback fault server.
import { describe, test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { ROOT, installPacked, sh } from "../packed.mjs";

const BIN = path.join(ROOT, "node_modules/.bin");
const RUNTIMES = {
  node: [process.execPath, ["body.mjs"]],
  deno: [path.join(BIN, "deno"), ["run", "--quiet", "--allow-net=127.0.0.1", "--allow-read", "--allow-env", "body.mjs"]],
  bun: [path.join(BIN, "bun"), ["run", "body.mjs"]],
};

let srv;
let tmp;
let project;
before(async () => {
  srv = await startFaultServer({ seed: 1 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-runtimes-"));
  ({ project } = await installPacked(tmp, "tilefetch-runtimes"));
  fs.copyFileSync(path.join(ROOT, "tests/runtimes/body.mjs"), path.join(project, "body.mjs"));
});
after(async () => {
  await srv?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

describe("one test body in every server-side runtime", { concurrency: 1 }, () => {
  const results = {};
  for (const [name, [cmd, args]] of Object.entries(RUNTIMES)) {
    test(`${name}: tiles over a flaky server, errors, options, stats, User-Agent`, { timeout: 120_000 }, async (t) => {
      const run = `rt-${name}`;
      const { stdout } = await sh(cmd, args, {
        cwd: project,
        env: { ...process.env, FAULT_SERVER_URL: srv.url, RUN: run, NO_COLOR: "1", DENO_NO_UPDATE_CHECK: "1" },
      });
      const out = JSON.parse(stdout.trim().split("\n").at(-1));
      assert.match(out.resolved, /\/node_modules\/tilefetch\/node\.js$/, `${name} resolves the package's node entry`);
      out.tiles.forEach((tile, i) => {
        assert.deepEqual({ ...tile, hex: undefined }, { status: 200, attempts: 3, contentType: "image/png", hex: undefined });
        assert.equal(tile.hex, tilePng(3, i, 1).toString("hex"), `tile ${i}: the true bytes`);
      });
      assert.equal(srv.requests(`${run}/3`), 6 * 3 + 1 + 1, "3 per flaky tile, 1 for the 404, 1 for the exception");
      assert.deepEqual(
        { ...out.notFound, message: undefined },
        { isTileError: true, name: "TileError", kind: "http", status: 404, attempts: 1, message: undefined },
      );
      assert.equal(out.serviceException.kind, "service-exception");
      assert.match(out.serviceException.message, /LayerNotDefined/);
      assert.deepEqual({ ...out.badOption, message: undefined }, { isTileError: true, kind: "invalid-options", message: undefined });
      assert.match(out.badOption.message, /deadlineMs/);
      assert.match(out.badClient.message, /maxConcurent.*maxConcurrent/s, "names the field and suggests the key");
      assert.deepEqual(out.stats, { requests: 6, attempts: 18, retries: 12, successes: 6 });
      const agents = new Set(srv.log.filter((e) => e.key.startsWith(`${run}/`)).map((e) => e.headers["user-agent"]));
      assert.deepEqual(
        [...agents],
        [`tilefetch/${JSON.parse(fs.readFileSync(path.join(ROOT, "pkg/package.json"))).version} (+https://www.npmjs.com/package/tilefetch)`],
      );
      results[name] = JSON.parse(JSON.stringify({ ...out, resolved: undefined }).replaceAll(run, "RUN"));
      t.diagnostic(`${name}: ${out.tiles.length} tiles (3 attempts each), 404 → http, LayerNotDefined → service-exception, bad options named`);
    });
  }
  test("the three runtimes gave the same results", () => {
    assert.deepEqual(Object.keys(results), Object.keys(RUNTIMES));
    assert.deepEqual(results.deno, results.node);
    assert.deepEqual(results.bun, results.node);
  });
});
