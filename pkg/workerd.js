// Cloudflare Workers (workerd) cannot compile wasm from bytes at run time: the .wasm is imported
// as a module, which the platform compiles at deploy time. workerd loads the edge build: the
// module browsers load plus what the edge proxy (tilefetch/worker) asks of it.
import wasmModule from "./gen/tilefetch_edge_bg.wasm";
import { initSync, fetchTile, sendUserAgent, stats, TileClient, TileError } from "./gen/tilefetch_edge.js";

initSync({ module: wasmModule });
// A script may set User-Agent here (unlike in a browser): requests name tilefetch (README).
sendUserAgent();

export { fetchTile, stats, TileClient, TileError };
