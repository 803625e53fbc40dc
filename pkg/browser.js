// Pages, Web Workers, service workers and bundlers (Vite): no top-level await and no init(). The
// module compiles in the background from the moment of import; calls made before it is ready
// wait for it inside their own deadline (see src/web/lazy.js, bundled into the glue).
import { LazyTileClient as TileClient, lazyFetchTile as fetchTile, lazyStats as stats, startLoading, TileError } from "./gen/tilefetch.js";

startLoading(new URL("./gen/tilefetch_bg.wasm", import.meta.url));

export { fetchTile, stats, TileClient, TileError };
