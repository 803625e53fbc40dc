// One profiled run for bench/profile.mjs: fetches `--tiles` healthy tiles, 16 at a time, through
// one client of bench/clients/, after a warm-up of 400, with V8's sampling profiler recording only
// the measured part (node:inspector, in this process). Writes the profile to the given path.
//
//   node bench/profile-run.mjs <client> <serverUrl> <out.cpuprofile> [--tiles 4000]
import fs from "node:fs";
import { Session } from "node:inspector/promises";
import { BEFORE_ID } from "./before/id.mjs";
import { CLIENTS } from "./clients/index.mjs";
import { profileTiles } from "./profile-tiles.mjs";

const [id, serverUrl, out] = process.argv.slice(2);
const i = process.argv.indexOf("--tiles");
const tiles = i >= 0 ? Number(process.argv[i + 1]) : 4000;
const concurrency = 16;
// Raw fetch and the plain wrapper run without tilefetch loaded, so that every wasm module in
// their profiles is fetch's.
// tilefetch at the boundary issue's start (bench/before/) loads its own build, and only it.
const module = id === BEFORE_ID ? await import("./before/client.mjs") : CLIENTS[id];
const tilefetch = module.anchor === "tilefetch" ? await import("../pkg/node.js") : null;
const client = module.create({ tilefetch });
const urls = (n, firstRow) => profileTiles(serverUrl, n, firstRow);

async function run(list) {
  let next = 0;
  const worker = async () => {
    while (next < list.length) {
      const data = await client.get(list[next++], new AbortController().signal);
      if (!(data instanceof Uint8Array) || data.length < 100) throw new Error("not a tile");
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

await run(urls(400, 20000)); // warm-up: JIT, connections
const session = new Session();
session.connect();
await session.post("Profiler.enable");
await session.post("Profiler.setSamplingInterval", { interval: 100 }); // µs
await session.post("Profiler.start");
const t0 = performance.now();
await run(urls(tiles, 10000));
const wallMs = performance.now() - t0;
const { profile } = await session.post("Profiler.stop");
session.disconnect();
client.close?.();
fs.writeFileSync(out, JSON.stringify(profile));
process.stdout.write(JSON.stringify({ tiles, wallMs }));
