#!/usr/bin/env node
// Today's module beside the module of an earlier commit, on the overhead bench's healthy tiles
// (the loopback fault server in a process of its own, 32 calls at a time, alternating rounds):
// wall and process CPU per call of each, and today's minus the earlier one's within each round
// (median). For "does this change cost a healthy tile anything": the earlier commit is the one
// before the change. The earlier module is built from the repository's history into
// $TMPDIR/tilefetch-beside/<commit>/ with that commit's own scripts/build.sh (once; kept): outside
// the repository, whose tools would take its copy of their configuration for a second root.
// Prints a table.
//
//   node bench/beside.mjs --commit <sha> [--tiles 400] [--rounds 11]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { option } from "./cli.mjs";
import { runRounds } from "./overhead-rounds.mjs";
import { startServerProcess } from "./server-process.mjs";

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const commit = option("commit", null);
if (!commit) throw new Error("bench/beside.mjs: --commit <sha> names the earlier module");
const tiles = Number(option("tiles", 400));
const rounds = Number(option("rounds", 11));
const sha = execFileSync("git", ["rev-parse", "--short", commit], { cwd: ROOT, encoding: "utf8" }).trim();

/** $TMPDIR/tilefetch-beside/<sha>/pkg/node.js, built from `sha` with its own build script (once). */
function builtAt(sha) {
  const dir = path.join(os.tmpdir(), "tilefetch-beside", sha);
  const entry = path.join(dir, "pkg/node.js");
  if (fs.existsSync(path.join(dir, ".built"))) return entry;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  execFileSync("sh", ["-c", `git archive ${sha} | tar -x -C ${JSON.stringify(dir)}`], { cwd: ROOT, stdio: "inherit" });
  fs.symlinkSync(path.join(ROOT, "node_modules"), path.join(dir, "node_modules"));
  execFileSync("bash", ["scripts/build.sh"], { cwd: dir, stdio: ["ignore", "ignore", "inherit"] });
  fs.writeFileSync(path.join(dir, ".built"), sha);
  return entry;
}

const earlier = await import(pathToFileURL(builtAt(sha)).href);
const today = await import(pathToFileURL(path.join(ROOT, "pkg/node.js")).href);
const server = await startServerProcess();
try {
  const urls = Array.from({ length: tiles }, (_, i) => `${server.url}/tile/10/${i % 40}/${Math.floor(i / 40)}.png?run=beside`);
  // A client each, as a map's layer has: its own host state, never shared between the two.
  const clientOf = (mod) => {
    let client = new mod.TileClient();
    return {
      async get(url, signal) {
        return (await client.fetchTile(url, { signal })).data;
      },
      reset() {
        client = new mod.TileClient();
      },
    };
  };
  const clients = { [`at ${sha}`]: clientOf(earlier), today: clientOf(today) };
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const samples = await runRounds({ clients, urls, concurrency: 32, rounds, cpu });
  const median = (xs) => {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  };
  const [a, b] = Object.values(samples);
  const per = (s) => ({ wallUs: (s.wallMs * 1000) / tiles, cpuUs: s.cpuUs / tiles });
  const row = (name, runs) => `| ${name} | ${median(runs.map((s) => per(s).wallUs)).toFixed(1)} | ${median(runs.map((s) => per(s).cpuUs)).toFixed(1)} |`;
  const diff = (f) => median(b.map((s, i) => f(per(s)) - f(per(a[i]))));
  const spread = (f) => {
    const d = b.map((s, i) => f(per(s)) - f(per(a[i])));
    return `${Math.min(...d).toFixed(1)} … ${Math.max(...d).toFixed(1)}`;
  };
  console.log(
    `node bench/beside.mjs --commit ${sha} --tiles ${tiles} --rounds ${rounds} (Node ${process.version}, ${tiles} healthy tiles, 32 at a time, ${rounds} rounds after 2 of warm-up)`,
  );
  console.log("");
  console.log("| module | wall µs per call | CPU µs per call |");
  console.log("| --- | --- | --- |");
  console.log(row(`at ${sha}`, a));
  console.log(row("today", b));
  console.log(
    `| today − at ${sha}, median within a round (range) | ${diff((p) => p.wallUs).toFixed(1)} (${spread((p) => p.wallUs)}) | ${diff((p) => p.cpuUs).toFixed(1)} (${spread((p) => p.cpuUs)}) |`,
  );
} finally {
  await server.stop();
}
