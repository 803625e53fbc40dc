import { LazyTileClient as TileClient, lazyFetchTile as fetchTile, lazyStats as stats, startLoading, TileError } from "./gen/tilefetch.js";

startLoading(
  import.meta.url
    ? new URL("./gen/tilefetch_bg.wasm", import.meta.url)
    : new URL("gen/tilefetch_bg.wasm", globalThis.document?.currentScript?.src ?? globalThis.location.href),
);

export { fetchTile, stats, TileClient, TileError };
