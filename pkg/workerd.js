// Cloudflare Workers (workerd) cannot compile wasm from bytes at run time: the .wasm is imported
// as a module, which the platform compiles at deploy time.
import wasmModule from "./gen/tilefetch_bg.wasm";
import { initSync, fetchTile, sendUserAgent, stats, TileClient, TileError } from "./gen/tilefetch.js";

initSync({ module: wasmModule });
// A script may set User-Agent here (unlike in a browser): requests name tilefetch (README).
sendUserAgent();

export { fetchTile, stats, TileClient, TileError };
