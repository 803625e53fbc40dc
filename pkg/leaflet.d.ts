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
 * aborted whether in flight, queued or sleeping; a give-up calls `done(error)`, so `tileerror`
 * fires with the TileError as `error` (and `errorTileUrl` is shown when set); an empty tile
 * (`emptyOn`) loads as a transparent image. The tile element (`tileload`'s `tile`) is a
 * `<canvas>` whose context is `"bitmaprenderer"` (so `getContext("2d")` on it is `null`; draw it
 * with `drawImage` instead), or an `<img>` when `errorTileUrl` is set or `createImageBitmap` is
 * missing.
 *
 * @param L the Leaflet namespace (`import L from "leaflet"` or `window.L`)
 */
export function createTileLayer<TL = any>(
  L: { TileLayer: { extend(props: object): new (url: string, options?: object) => TL } } & Record<string, any>,
  urlTemplate: string,
  options?: LeafletTileOptions | TileClient,
): TL;
