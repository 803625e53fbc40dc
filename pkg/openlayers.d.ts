/**
 * tilefetch/openlayers: tile loaders for OpenLayers ≥ 10 (the `ol` peer dependency), loading
 * every tile through {@link fetchTile} (or a shared {@link TileClient}).
 */
import type { FetchTileOptions, TileClient } from "./index.d.ts";
import type { LoadFunction } from "ol/Tile.js";
import type { Loader as ImageTileLoader } from "ol/source/ImageTile.js";
import type OlMap from "ol/Map.js";

/** fetchTile options (applied to every tile), plus the adapter's own fields. */
export interface OpenLayersTileOptions extends FetchTileOptions {
  /** A client shared by several layers (per-host queue, breaker, pause, stats). @default the default client */
  client?: TileClient;
  /**
   * The map the source is shown in. When given, a tile still loading when a rendered frame no
   * longer wants it (panned or zoomed away, or disposed) is aborted: its load ends as
   * TileState.ERROR (so OpenLayers' tile queue frees the slot; `tileloaderror` fires) and it
   * goes back to TileState.IDLE, so it loads again when the view returns.
   * @default undefined (tiles load to the end)
   */
  map?: OlMap;
}

/**
 * A `tileLoadFunction` for ol image tile sources (XYZ, OSM, WMTS, TileWMS, TileImage). Loads
 * through fetchTile; the tile gets a `<canvas>` drawn from `createImageBitmap` through
 * `ImageTile#setImage` (without `createImageBitmap`, an `<img>` decoded from a Blob object URL,
 * revoked after load or error).
 * A give-up always ends as TileState.ERROR (the TileError is on `tile.error`); an empty tile
 * (`emptyOn`, e.g. 204) as TileState.EMPTY.
 */
export function createTileLoadFunction(options?: OpenLayersTileOptions | TileClient): LoadFunction;

/**
 * A `tileLoadFunction` for ol/source/VectorTile: `tile.setLoader(...)` with a loader that
 * fetches through fetchTile, reads features with the tile's format (`getType()`: arraybuffer,
 * json, text or xml) and calls `tile.onLoad(features, dataProjection)`, or `tile.onError()` on
 * give-up (the TileError is on `tile.error`). An empty tile loads with no features.
 */
export function createVectorTileLoadFunction(options?: OpenLayersTileOptions | TileClient): LoadFunction;

/** fetchTile options, optionally with a shared `client`. */
export interface OpenLayersLoaderOptions extends FetchTileOptions {
  client?: TileClient;
}

/**
 * A `loader` for ol/source/ImageTile (and ol/source/DataTile): `(z, x, y, {signal, maxY}) =>
 * Promise<ImageBitmap>`. `template` may use `{z}`, `{x}`, `{y}`, `{-y}`, and `{s}` (mirrors from
 * `subdomains`) or `{a-c}` / `{1-4}` (mirrors from the range). OpenLayers' `signal` aborts the
 * tile when the map disposes it. Rejects with the TileError on give-up (the tile ends as
 * TileState.ERROR); an empty tile resolves as a transparent 1×1 image.
 */
export function createImageTileLoader(template: string, options?: OpenLayersLoaderOptions | TileClient): ImageTileLoader;
