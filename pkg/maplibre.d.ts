/**
 * tilefetch/maplibre: a MapLibre GL JS (5 or 6, the `maplibre-gl` peer dependency; both tested) protocol that
 * loads tiles through {@link fetchTile} (or a shared {@link TileClient}).
 *
 * ```js
 * maplibregl.addProtocol("tilefetch", createProtocol({ deadlineMs: 8000 }));
 * // in the style: "tiles": ["tilefetch://https://tiles.example.com/{z}/{x}/{y}.png"]
 * ```
 */
import type { FetchTileOptions, TileClient } from "./index.d.ts";

/** fetchTile options (applied to every request), optionally with a shared `client`. */
export interface MapLibreProtocolOptions extends FetchTileOptions {
  client?: TileClient;
}

/** What MapLibre passes to a protocol action (a subset of its RequestParameters). */
export interface ProtocolRequestParameters {
  /** `tilefetch://https://host/…`: the scheme prefix is removed before fetching. */
  url: string;
  /** How MapLibre wants the data: "arrayBuffer" (default), "image", "json" or "string". */
  type?: "string" | "json" | "arrayBuffer" | "image";
  headers?: any;
  credentials?: "same-origin" | "include";
  [key: string]: unknown;
}

export interface ProtocolResponse {
  /** An ArrayBuffer (tiles), a parsed object ("json"), a string ("string"), or for "image" (raster tiles) the tile decoded, an ImageBitmap (bytes where there is no createImageBitmap). */
  data: any;
  cacheControl?: string;
  expires?: string;
}

/**
 * The action for `maplibregl.addProtocol(scheme, action)`. The abortController cancels the tile
 * (in flight, queued or sleeping; a request the server has lands into the client's recent tiles
 * while no other request waits for its connection: `whenAbandoned: "yield"`, unless the options
 * say otherwise); a cancelled request rejects with a DOMException named "AbortError" (MapLibre
 * ignores those). A give-up rejects with the TileError, whose `status`
 * MapLibre reads: a 404 marks the tile errored without an error event, others fire the map's
 * `error` event with the TileError as `error`. An empty tile (`emptyOn`) resolves with an empty
 * ArrayBuffer, or a transparent 1×1 ImageBitmap for images.
 */
export function createProtocol(
  options?: MapLibreProtocolOptions | TileClient,
): (requestParameters: ProtocolRequestParameters, abortController: AbortController) => Promise<ProtocolResponse>;
