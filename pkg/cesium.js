// tilefetch/cesium: routes a CesiumJS imagery provider's tile requests through fetchTile.
//
//   const provider = new Cesium.WebMapServiceImageryProvider({ url, layers: "roads" });
//   viewer.imageryLayers.addImageryProvider(routeImagery(Cesium, provider, { deadlineMs: 8000 }));
//
// CesiumJS is a peer dependency and is passed in (`routeImagery(Cesium, …)`), never imported here.
import { adapterOptions } from "./adapter-options.js";

/** The createImageBitmap options Cesium decodes imagery with: WebGL's rows run bottom-up. */
const CESIUM_BITMAP = { imageOrientation: "flipY", premultiplyAlpha: "none", colorSpaceConversion: "default" };

/** Cesium's compressed imagery: left to Cesium's own loader, which decodes it (KTX2 transcoding). */
const KTX2 = /\.ktx2$/i;

/** Providers already routed: a second routeImagery of one would run inside the first. */
const ROUTED = new WeakSet();

/**
 * Routes `provider`'s tile requests through fetchTile (or `options.client`, a TileClient) and
 * returns `provider`. Every provider that builds its tile URLs with Cesium's `Resource` and loads
 * them with `ImageryProvider.loadImage` works: UrlTemplate, WebMapService, WebMapTileService,
 * TileMapService, OpenStreetMap. Cesium still builds each URL (its templates, its WMS and WMTS
 * parameters, its subdomains), and still schedules each request: it goes through
 * `RequestScheduler` with Cesium's `Request`, so Cesium's per-server limit counts it and a request
 * Cesium cancels is aborted. A give-up rejects with the TileError, which Cesium reports as the
 * tile's error (`provider.errorEvent`; the parent tile's imagery stays in its place). Left to
 * Cesium's own loader: KTX2 imagery, Cesium ion's resources, and the tiles a time-dynamic provider
 * preloads for its next interval (Cesium asks for those outside the provider's requestImage).
 *
 * `options`: fetchTile options, optionally with `client`; or a TileClient itself.
 */
export function routeImagery(Cesium, provider, options) {
  if (!Cesium || typeof Cesium.ImageryProvider?.loadImage !== "function" || typeof Cesium.RequestScheduler?.request !== "function") {
    throw new TypeError("tilefetch/cesium: pass CesiumJS (the Cesium namespace) as the first argument");
  }
  if (!provider || typeof provider.requestImage !== "function") {
    throw new TypeError("tilefetch/cesium: routeImagery needs an imagery provider (one with requestImage)");
  }
  if (ROUTED.has(provider)) throw new TypeError("tilefetch/cesium: this imagery provider is routed already");
  const { fetchOptions, load } = adapterOptions("cesium", options);
  const { ImageryProvider, IonResource } = Cesium;

  const requestImage = provider.requestImage;
  // Cesium's providers build the tile's Resource and hand it, in the same call, to the static
  // ImageryProvider.loadImage, which they reach through the Cesium namespace; that call is the
  // one public seam between "which URL" (Cesium's) and "how to load it" (tilefetch's). It is
  // taken over for the length of this provider's own synchronous requestImage only, so no other
  // provider's tiles and no other code see it.
  provider.requestImage = function tilefetchRequestImage(...args) {
    const cesiumLoad = ImageryProvider.loadImage;
    ImageryProvider.loadImage = (imageryProvider, url) => {
      const resource = Cesium.Resource.createIfNeeded(url);
      // Cesium ion's resources add their access token (and renew it on a 401) as they load.
      if (KTX2.test(resource.url) || (IonResource && resource instanceof IonResource)) return cesiumLoad(imageryProvider, url);
      return schedule(resource, load, fetchOptions, Cesium);
    };
    try {
      return requestImage.apply(this, args);
    } finally {
      ImageryProvider.loadImage = cesiumLoad;
    }
  };
  ROUTED.add(provider);
  return provider;
}

/**
 * Loads `resource` (Cesium's tile URL, its Request and headers) through `load`, scheduled by
 * Cesium's RequestScheduler as Cesium's own loader would be: `undefined` when Cesium says "too
 * many requests to this server now, ask again next frame", else a Promise of the ImageBitmap.
 */
function schedule(resource, load, fetchOptions, Cesium) {
  const url = resource.url;
  const extra = {};
  const headers = resource.headers;
  if (headers && Object.keys(headers).length > 0 && fetchOptions.headers === undefined) extra.headers = headers;
  const controller = new AbortController();
  // A promise whatever happens: a synchronous throw would leave the scheduler counting a request.
  const run = () => new Promise((resolve) => resolve(load(url, controller.signal, extra))).then(toImage);
  const request = resource.request; // every Resource has one: Cesium's, or a new one of its own
  // As Cesium's own loader: a Request still in flight cannot be fetched again; one that ended can.
  if (request.state === Cesium.RequestState.ISSUED || request.state === Cesium.RequestState.ACTIVE) {
    throw new Cesium.RuntimeError("The Resource is already being fetched.");
  }
  request.state = Cesium.RequestState.UNISSUED;
  request.deferred = undefined;
  request.url = url;
  request.requestFunction = run;
  request.cancelFunction = () => controller.abort(new DOMException("the request was cancelled by Cesium", "AbortError"));
  return Cesium.RequestScheduler.request(request);
}

/** The tile as Cesium takes imagery: an ImageBitmap flipped for WebGL, a clear pixel when empty. */
function toImage(tile) {
  if (tile.empty) return createImageBitmap(new ImageData(1, 1), CESIUM_BITMAP);
  const blob = new Blob([tile.data], { type: tile.contentType ?? "image/png" });
  // A TileDiscardPolicy (Bing's, for one) reads the bytes of the image it judges, or of the one
  // that did not decode (Bing's "no tile here" is an empty body).
  return createImageBitmap(blob, CESIUM_BITMAP).then(
    (image) => {
      image.blob = blob;
      return image;
    },
    (error) => {
      if (error && typeof error === "object") error.blob = blob;
      throw error;
    },
  );
}
