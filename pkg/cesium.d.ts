/**
 * tilefetch/cesium: routes a CesiumJS imagery provider's tile requests (CesiumJS ≥ 1.145, the
 * optional `cesium` peer dependency, passed in as `Cesium`) through {@link fetchTile} (or a
 * shared {@link TileClient}).
 *
 * ```js
 * const provider = new Cesium.WebMapServiceImageryProvider({ url, layers: "roads" });
 * viewer.imageryLayers.addImageryProvider(routeImagery(Cesium, provider, { deadlineMs: 8000 }));
 * ```
 */
import type { FetchTileOptions, TileClient } from "./index.d.ts";

/** fetchTile options (applied to every tile), optionally with a shared `client`. */
export interface CesiumImageryOptions extends FetchTileOptions {
  client?: TileClient;
}

/** The part of an ImageryProvider this adapter uses. */
export interface RoutableImageryProvider {
  requestImage(x: number, y: number, level: number, request?: unknown): Promise<unknown> | undefined;
}

/**
 * Routes `provider`'s tiles through tilefetch and returns `provider`. Cesium still builds each
 * tile's URL (templates, WMS and WMTS parameters, subdomains) and schedules each request through
 * its `RequestScheduler` (its per-server limit counts it; a request Cesium cancels is aborted).
 * A tile resolves as an ImageBitmap flipped for WebGL (a transparent pixel when empty); a give-up
 * rejects with the {@link TileError}, which Cesium reports through `provider.errorEvent`.
 * Providers that build URLs with Cesium's `Resource` and load with `ImageryProvider.loadImage`
 * are routed: UrlTemplate, WebMapService, WebMapTileService, TileMapService, OpenStreetMap.
 * KTX2 imagery and Cesium ion's resources (which add their token as they load) stay with
 * Cesium's own loader, and so do the tiles a time-dynamic WMS or WMTS provider preloads for its
 * next interval. Cesium cancels no imagery request of a tile that leaves the view. Throws a
 * TypeError for a missing `Cesium`, a provider without `requestImage`, or one routed already.
 *
 * @param Cesium the CesiumJS namespace (`import * as Cesium from "cesium"` or `window.Cesium`)
 */
export function routeImagery<P extends RoutableImageryProvider>(
  Cesium: { ImageryProvider: any; RequestScheduler: any; Resource: any } & Record<string, any>,
  provider: P,
  options?: CesiumImageryOptions | TileClient,
): P;
