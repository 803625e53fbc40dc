// The published package as a user gets it: `npm pack` pkg/ and install the tarball into a fresh
// project. Shared by the Node install test and the Vite build test.
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../", import.meta.url));
export const PKG = path.join(ROOT, "pkg");
const NPM = process.platform === "win32" ? "npm.cmd" : "npm";
const execFileAsync = promisify(execFile);

/** Runs a command without blocking the event loop (the fault server lives in it); fails the test with its output. */
export async function sh(cmd, args, opts) {
  try {
    return await execFileAsync(cmd, args, { maxBuffer: 16 * 1024 * 1024, timeout: 120_000, ...opts });
  } catch (e) {
    assert.fail(`${cmd} ${args.join(" ")} failed (exit ${e.code}):\n${e.stdout ?? ""}\n${e.stderr ?? ""}`);
  }
}

/**
 * `npm pack`s pkg/ into `dir`/pack, as `npm publish` would upload it. Returns the tarball's path
 * and its file list.
 */
export async function packTarball(dir) {
  const packDir = path.join(dir, "pack");
  fs.mkdirSync(packDir, { recursive: true });
  const { stdout } = await sh(NPM, ["pack", "--json", "--pack-destination", packDir], { cwd: PKG });
  const info = JSON.parse(stdout.slice(stdout.indexOf("[")))[0];
  return { tarball: path.join(packDir, info.filename), files: info.files.map((f) => f.path) };
}

/**
 * Packs pkg/ (packTarball) and installs the tarball into a new project `dir`/`name` (offline:
 * the package has no runtime dependencies). Returns the project folder and the packed file list.
 */
export async function installPacked(dir, name) {
  const { tarball, files } = await packTarball(dir);
  const project = path.join(dir, name);
  fs.mkdirSync(project);
  fs.writeFileSync(path.join(project, "package.json"), JSON.stringify({ name, version: "0.0.0", private: true, type: "module" }, null, 2));
  await sh(NPM, ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", tarball], { cwd: project });
  assert.ok(fs.existsSync(path.join(project, "node_modules", "tilefetch", "package.json")), "tilefetch installed");
  return { project, files, tarball };
}
