// Node ≥ 20: compile the module from the file next to this one, synchronously, at import.
import { readFileSync } from "node:fs";
import { initSync, fetchTile, sendUserAgent, stats, TileClient, TileError } from "./gen/tilefetch.js";

initSync({ module: readFileSync(new URL("./gen/tilefetch_bg.wasm", import.meta.url)) });
// A script may set User-Agent here (unlike in a browser): requests name tilefetch (README).
sendUserAgent();

export { fetchTile, stats, TileClient, TileError };
