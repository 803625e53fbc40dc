/**
 * tilefetch/leaflet: an L.TileLayer (Leaflet 1.9, the `leaflet` peer dependency, passed in as
 * `L`) whose tiles load through {@link fetchTile} (or a shared {@link TileClient}).
 */
import type { FetchTileOptions, TileClient } from "./index.d.ts";

/**
 * Leaflet TileLayer options and fetchTile options in one object: fetchTile's fields are
 * recognised by name, every other field goes to L.TileLayer. `subdomains` serves both: `{s}` in
 * the template becomes tilefetch's mirrors (a retry goes to the next subdomain).
 * `referrerPolicy` (a string) is also used for the fetch, and `crossOrigin: "use-credentials"`
 * means `credentials: "include"`.
 */
export type LeafletTileOptions = Omit<FetchTileOptions, "subdomains" | "referrerPolicy"> & {
  /** A client shared by several layers (per-host queue, breaker, pause, stats). @default the default client */
  client?: TileClient;
  subdomains?: string | string[];
  referrerPolicy?: ReferrerPolicy | false;
  /** Any L.TileLayer option (attribution, maxZoom, tileSize, errorTileUrl, …). */
  [leafletOption: string]: unknown;
};

/**
 * An instance of a subclass of `L.TileLayer`. Its `createTile(coords, done)` loads through
 * fetchTile; tiles that leave the view (`tileunload`) or are dropped on zoom (`tileabort`) are
 * given up whether in flight, queued or sleeping (a request the server has lands into the
 * client's recent tiles while no other request waits for its connection: `whenAbandoned:
 * "yield"`, unless the options say otherwise); a give-up calls `done(error)`, so `tileerror`
 * fires with the TileError as `error` (and `errorTileUrl` is shown when set); an empty tile
 * (`emptyOn`) loads as a transparent image. The tile element (`tileload`'s `tile`) is a
 * `<canvas>` whose context is `"bitmaprenderer"` (so `getContext("2d")` on it is `null`; draw it
 * with `drawImage` instead), or an `<img>` when `errorTileUrl` is set, `createImageBitmap` is
 * missing, or the tile will most likely load as an image (a server found without CORS headers,
 * or not yet known to send them: a first view's tiles).
 *
 * @param L the Leaflet namespace (`import L from "leaflet"` or `window.L`)
 */
export function createTileLayer<TL = any>(
  L: { TileLayer: { extend(props: object): new (url: string, options?: object) => TL } } & Record<string, any>,
  urlTemplate: string,
  options?: LeafletTileOptions | TileClient,
): TL;

/**
 * Leaflet's WMS layer (what `L.tileLayer.wms(url, options)` takes: WMS parameters such as
 * `layers`, `styles`, `format`, `transparent`, `version`, and `crs`, `uppercase`, TileLayer
 * options) whose tiles load through fetchTile as {@link createTileLayer}'s do; fetchTile options
 * in the same object, recognised by name (a WMS vendor parameter named like one, such as
 * MapServer's `mode`, goes in `url`'s query instead). Each tile is one GetMap of its BBOX; an
 * exception report ends the tile at once with the server's code and text on the TileError.
 *
 * @param L the Leaflet namespace
 * @param url the service's URL (`https://…/wms?` with any fixed parameters)
 */
export function createWmsLayer<TL = any>(
  L: { TileLayer: { WMS: new (url: string, options?: object) => TL } } & Record<string, any>,
  url: string,
  options?: LeafletTileOptions | TileClient,
): TL;

/**
 * A subclass of `Base` (`L.TileLayer`, or a class a plugin derives from it: a WMTS layer, a
 * layer in a national projection) whose tiles load through fetchTile as {@link createTileLayer}'s
 * do. Its constructor takes what `Base`'s takes, with fetchTile options (or `client`) beside the
 * layer's own in the options, its last argument. One class per `Base`, made once.
 *
 * @param L the Leaflet namespace
 * @param Base the layer class @default L.TileLayer
 */
export function routeTileLayer<C extends new (...args: any[]) => any>(L: { TileLayer: Function } & Record<string, any>, Base?: C): C;
