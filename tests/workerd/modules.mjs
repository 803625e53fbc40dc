// The modules a worker needs in Miniflare, named relative to the repo root: the workerd entry of
// the package with the build it loads (pkg/workerd.js, the edge build's glue and compiled wasm),
// and for a tile proxy pkg/worker.js, pkg/worker/* and the option registry's names (pkg/gen/options.js). Shared by tests/workerd/*.test.mjs and
// bench/edge-scale.mjs.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));

/** The compiled module pkg/workerd.js imports: there when the package is built. */
export const WORKERD_WASM = path.join(ROOT, "pkg/gen/tilefetch_edge_bg.wasm");

const js = (p) => ({ type: "ESModule", path: path.join(ROOT, p) });

/** A worker that imports only the package's workerd entry, with `entry` first. */
export function workerdModules(entry) {
  return [js(entry), js("pkg/workerd.js"), js("pkg/gen/tilefetch_edge.js"), { type: "CompiledWasm", path: WORKERD_WASM }];
}

/** Every module of the proxy with `entry` (a path from the repo root) first. */
export function proxyModules(entry = "tests/workerd/fixtures/proxy-worker.mjs") {
  const [first, ...workerd] = workerdModules(entry);
  return [
    first,
    js("pkg/worker.js"),
    js("pkg/gen/options.js"),
    ...fs
      .readdirSync(path.join(ROOT, "pkg/worker"))
      .filter((f) => f.endsWith(".js"))
      .map((f) => js(`pkg/worker/${f}`)),
    ...workerd,
  ];
}
