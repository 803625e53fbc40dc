// Node ≥ 20: compile the module from the file next to this one, synchronously, at import.
import { readFileSync } from "node:fs";
import { initSync, fetchTile, stats, TileClient, tileErrorClass } from "./gen/tilefetch.js";

initSync({ module: readFileSync(new URL("./gen/tilefetch_bg.wasm", import.meta.url)) });

/** @type {typeof import("./index.d.ts").TileError} */
export const TileError = tileErrorClass();
export { fetchTile, stats, TileClient };
