// The modules a tile-proxy worker needs in Miniflare, named relative to the repo root: the entry,
// pkg/worker.js and pkg/worker/*, the workerd entry, the glue and the compiled wasm. Shared by
// tests/workerd/proxy.test.mjs and bench/edge-scale.mjs.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** Every module of the proxy with `entry` (a path from the repo root) first. */
export function proxyModules(entry = "tests/workerd/fixtures/proxy-worker.mjs") {
  const js = (p) => ({ type: "ESModule", path: path.join(ROOT, p) });
  return [
    js(entry),
    js("pkg/worker.js"),
    ...fs
      .readdirSync(path.join(ROOT, "pkg/worker"))
      .filter((f) => f.endsWith(".js"))
      .map((f) => js(`pkg/worker/${f}`)),
    js("pkg/workerd.js"),
    js("pkg/gen/tilefetch.js"),
    { type: "CompiledWasm", path: path.join(ROOT, "pkg/gen/tilefetch_bg.wasm") },
  ];
}
