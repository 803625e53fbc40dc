// Pages, Web Workers, service workers and bundlers (Vite): no top-level await and no init(). The
// module compiles in the background from the moment of import; calls made before it is ready
// wait for it inside their own deadline (see src/web/lazy.js, bundled into the glue).
import { LazyTileClient as TileClient, lazyFetchTile as fetchTile, lazyStats as stats, startLoading, TileError } from "./gen/tilefetch.js";

// Bundlers find the .wasm by this exact expression. A bundle run as a classic script (esbuild's
// default format) has no import.meta.url: the .wasm is then looked for beside that script.
startLoading(
  import.meta.url
    ? new URL("./gen/tilefetch_bg.wasm", import.meta.url)
    : new URL("gen/tilefetch_bg.wasm", globalThis.document?.currentScript?.src ?? globalThis.location.href),
);

export { fetchTile, stats, TileClient, TileError };
