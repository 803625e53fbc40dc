/**
 * tilefetch/deckgl: a `getTileData` for deck.gl's `TileLayer` (@deck.gl/geo-layers 9, the
 * optional peer dependency) that loads each tile through {@link fetchTile} (or a shared
 * {@link TileClient}).
 *
 * ```js
 * new TileLayer({
 *   data: "https://tiles.example.com/{z}/{x}/{y}.png",
 *   getTileData: createGetTileData({ deadlineMs: 8000 }),
 *   renderSubLayers: (props) => new BitmapLayer(props, { data: null, image: props.data, bounds: … }),
 * });
 * ```
 */
import type { FetchTileOptions, Tile, TileClient } from "./index.d.ts";

/** fetchTile options (applied to every tile), optionally with a shared `client` and a `parse`. */
export interface DeckGlTileOptions<T = unknown> extends FetchTileOptions {
  client?: TileClient;
  /**
   * Turns a tile's bytes into the layer's tile data (a vector tile through loaders.gl's
   * `parse(bytes, MVTLoader)`, say). Without it: an ImageBitmap for an `image/*` tile, else the bytes.
   */
  parse?: (bytes: Uint8Array, tile: DeckGlTileLoadProps, response: Tile) => T | Promise<T>;
}

/** What deck.gl's TileLayer passes to `getTileData` (the part this adapter reads). */
export interface DeckGlTileLoadProps {
  index: { x: number; y: number; z: number };
  /** The layer's `data` template expanded for this tile. */
  url?: string | null;
  /** Aborted by deck.gl when the tile leaves the view. */
  signal?: AbortSignal;
  [key: string]: unknown;
}

/**
 * `getTileData` for a TileLayer whose `data` is a URL template. Resolves with the `parse` result
 * when `parse` is given; without it, with an ImageBitmap for an image (known by its type, or by
 * its first bytes when the type says nothing: PNG, JPEG, GIF, WebP), else the bytes; `null` for an
 * empty tile (`emptyOn`). The tile's `signal` aborts it wherever it is (in flight, queued,
 * sleeping before a retry); a give-up rejects with the {@link TileError}, which deck.gl passes to
 * `onTileError`. Throws a TypeError when deck.gl gives no `tile.url` (the layer's `data` is no
 * template), and for a `parse` that is not a function.
 */
export function createGetTileData<T>(
  options: DeckGlTileOptions<T> & { parse: (bytes: Uint8Array, tile: DeckGlTileLoadProps, response: Tile) => T | Promise<T> },
): (tile: DeckGlTileLoadProps) => Promise<T | null>;
export function createGetTileData(options?: DeckGlTileOptions<never> | TileClient): (tile: DeckGlTileLoadProps) => Promise<ImageBitmap | Uint8Array | null>;
