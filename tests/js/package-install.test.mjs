// The published shape: `npm pack` pkg/, install the tarball into a fresh project, import the
// bare specifier `tilefetch` (resolved through the package's exports, `node` condition) in a
// child Node process and fetch a tile from the fault server.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startFaultServer, tilePng } from "../server/fault-server.mjs";
import { PKG, installPacked, sh } from "../packed.mjs";

let srv;
let tmp;
before(async () => {
  srv = await startFaultServer({ seed: 1 });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-pack-"));
});
after(async () => {
  await srv?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

test("npm pack + npm install + import 'tilefetch' fetches a tile", { timeout: 180_000 }, async () => {
  const gen = path.join(PKG, "gen");
  assert.ok(
    fs.existsSync(gen) && fs.readdirSync(gen).length > 0,
    `${gen} is missing or empty: build the wasm package first (the build script in scripts/), then rerun this test`,
  );
  const manifest = JSON.parse(fs.readFileSync(path.join(PKG, "package.json"), "utf8"));
  assert.equal(manifest.name, "tilefetch");

  // 1. pack, 2. install into a fresh project
  const { project, files } = await installPacked(tmp, "tilefetch-consumer");
  assert.ok(
    files.some((f) => f.endsWith(".wasm")),
    `the tarball ships the .wasm: ${files.join(", ")}`,
  );
  assert.ok(files.includes("package.json"));

  // 3. import by bare specifier in a child process and fetch a tile
  const script = `
    import { fetchTile, TileError } from "tilefetch";
    const resolved = import.meta.resolve("tilefetch");
    const tile = await fetchTile(process.env.TILE_URL, { baseDelayMs: 10 });
    let kind = null;
    try { await fetchTile(process.env.BAD_URL, { baseDelayMs: 10 }); } catch (e) { kind = (e instanceof TileError) && e.kind; }
    console.log(JSON.stringify({
      resolved, status: tile.status, length: tile.data.length,
      hex: Buffer.from(tile.data).toString("hex"), attempts: tile.attempts, kind,
    }));
  `;
  const { stdout } = await sh(process.execPath, ["--input-type=module", "-e", script], {
    cwd: project,
    env: {
      ...process.env,
      TILE_URL: `${srv.url}/tile/5/6/7.png?run=pack&f=503&n=1`,
      BAD_URL: `${srv.url}/tile/5/6/8.png?run=pack&f=404`,
    },
  });
  const out = JSON.parse(stdout.trim().split("\n").at(-1));
  assert.equal(out.status, 200);
  assert.ok(
    fileURLToPath(out.resolved).startsWith(path.join(project, "node_modules", "tilefetch") + path.sep),
    `resolved to the installed copy: ${out.resolved}`,
  );
  assert.equal(out.attempts, 2);
  assert.equal(out.length, tilePng(5, 6, 7).length);
  assert.equal(out.hex, tilePng(5, 6, 7).toString("hex"));
  assert.equal(out.kind, "http", "TileError is exported from the same module that throws it");
  assert.equal(srv.requests("pack"), 3);
});
