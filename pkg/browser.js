// Pages, Web Workers and bundlers (Vite): stream-compile the .wasm next to this file. Top-level
// await means `import { fetchTile } from "tilefetch"` resolves only once it is ready: no init().
import init, { fetchTile, stats, TileClient, tileErrorClass } from "./gen/tilefetch.js";

await init({ module_or_path: new URL("./gen/tilefetch_bg.wasm", import.meta.url) });

/** @type {typeof import("./index.d.ts").TileError} */
export const TileError = tileErrorClass();
export { fetchTile, stats, TileClient };
