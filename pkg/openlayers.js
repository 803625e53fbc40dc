// tilefetch/openlayers: tile loaders for OpenLayers (a peer dependency, never bundled here).
//
//   createTileLoadFunction(options?)      tileLoadFunction of XYZ, OSM, WMTS, TileWMS (ImageTile tiles)
//   createVectorTileLoadFunction(options?) tileLoadFunction of VectorTile sources
//   createImageTileLoader(template, options?) loader of ol/source/ImageTile and ol/source/DataTile
//
// `options`: fetchTile options, optionally with `client` (a TileClient shared by layers), or a
// TileClient itself; createTileLoadFunction and createVectorTileLoadFunction also take `map`:
// tiles still loading when a rendered frame no longer wants them (the view panned or zoomed
// away) are aborted.
import TileState from "ol/TileState.js";
import { adapterOptions } from "./adapter-options.js";
import { decodeTile } from "./decode.js";
import { loadTile } from "./without-cors.js";

/**
 * Splits adapter options into the function that fetches, the fetchTile options and the map.
 * @returns {{load: (url: string | string[], signal: AbortSignal, extra?: object) => Promise<import("./index.d.ts").Tile>, map: any, custom?: Function}}
 */
function prepare(options) {
  // OpenLayers' own loader never abandons an image it started: a tile the view no longer wants
  // frees OpenLayers' queue at once (it is aborted for OpenLayers), and its request, already on
  // the server, lands into the client's recent tiles (docs/map-libraries.md).
  const { fetchOptions, rest, load } = adapterOptions("openlayers", options, (k) => k !== "map", { whenAbandoned: "land" });
  return { load, map: rest.map ?? null, custom: fetchOptions.fetch };
}

/**
 * Aborts loads of tiles that a rendered frame of `map` no longer wants (or that OpenLayers
 * disposed). One listener per loader function.
 */
function watchWanted(map, pending) {
  if (!map) return;
  if (typeof map.on !== "function") throw new TypeError("tilefetch/openlayers: options.map must be an ol/Map");
  map.on("postrender", (event) => {
    const frameState = event.frameState;
    if (!frameState || pending.size === 0) return;
    const wanted = frameState.wantedTiles ?? {};
    const sets = Object.values(wanted);
    for (const [tile, controller] of pending) {
      const key = tile.getKey();
      if (tile.disposed || !sets.some((set) => set[key])) controller.abort(new DOMException("tile no longer wanted", "AbortError"));
    }
  });
}

/** An aborted tile frees OpenLayers' queue slot (ERROR) and becomes loadable again (IDLE). */
function releaseAborted(tile) {
  if (tile.disposed || tile.getState() !== TileState.LOADING) return;
  tile.setState(TileState.ERROR);
  tile.setState(TileState.IDLE);
}

/**
 * A `tileLoadFunction` for ol image tile sources (XYZ, OSM, WMTS, TileWMS, TileImage): loads
 * through fetchTile, decodes the tile off the main thread (an image of a Blob object URL, revoked
 * once decoded) and gives it to the tile, ends give-ups as TileState.ERROR and empty tiles as
 * TileState.EMPTY.
 */
export function createTileLoadFunction(options) {
  const { load, map, custom } = prepare(options);
  const pending = new Map(); // tile -> AbortController
  watchWanted(map, pending);

  return function tilefetchTileLoad(tile, src) {
    const controller = new AbortController();
    pending.set(tile, controller);
    const image = tile.getImage();
    const crossOrigin = typeof HTMLImageElement !== "undefined" && image instanceof HTMLImageElement ? image.crossOrigin : null;
    loadTile(load, src, controller.signal, { crossOrigin, custom }).then(
      ({ tile: result, image: loaded }) => {
        pending.delete(tile);
        if (tile.disposed) return;
        if (loaded) {
          // A server without CORS headers: the image element, as OpenLayers' own loader has it.
          if (typeof tile.setImage === "function") tile.setImage(loaded);
          else image.src = loaded.src;
          return;
        }
        if (result.empty) {
          tile.setState(TileState.EMPTY);
          return;
        }
        // Only the <img> paths below need a Blob (registering one costs a round trip to the browser).
        const blob = () => new Blob([result.data], { type: result.contentType ?? "image/png" });
        const settable = typeof HTMLImageElement !== "undefined" && image instanceof HTMLImageElement && typeof tile.setImage === "function";
        if (settable && typeof createImageBitmap === "function") {
          // Decoded off the main thread (decode.js) and drawn into a canvas of its own,
          // which setImage takes in place of the tile's <img> and marks LOADED. No object URL
          // for the browser to load back and no img.decode(): in the map-view benchmark (healthy,
          // 36 paired steps, Chromium) that path ended 1.09–1.12× the own loader's time, this one
          // 1.03–1.07×.
          decodeTile(result).then(
            (bitmap) => {
              if (tile.disposed) return bitmap.close?.();
              try {
                const canvas = document.createElement("canvas");
                canvas.width = bitmap.width;
                canvas.height = bitmap.height;
                canvas.getContext("2d").drawImage(bitmap, 0, 0);
                tile.setImage(canvas);
              } catch {
                tile.setState(TileState.ERROR);
              } finally {
                bitmap.close?.();
              }
            },
            () => {
              if (!tile.disposed) tile.setState(TileState.ERROR);
            },
          );
        } else if (settable) {
          // Without createImageBitmap: decoded before OpenLayers draws it, as its own loader's
          // images are (ol/Image's listenImage awaits img.decode() when src is set before it
          // listens; ours comes later, so OpenLayers would wait for "load" and decode while
          // drawing). A fresh element, so the tile's own listeners never fire.
          const url = URL.createObjectURL(blob());
          const decoded = new Image();
          decoded.src = url;
          const settle = () => {
            URL.revokeObjectURL(url);
            if (tile.disposed) return;
            // As ol/Image's listenImage: a decode() that rejects for an image that did load (some
            // browsers reject for reasons of their own) still gives a drawable image.
            if (decoded.complete && decoded.naturalWidth > 0) tile.setImage(decoded);
            else tile.setState(TileState.ERROR);
          };
          decoded.decode().then(settle, settle);
        } else if (typeof HTMLImageElement !== "undefined" && image instanceof HTMLImageElement) {
          // An OpenLayers without ImageTile#setImage: the tile's image listens for load or error.
          const url = URL.createObjectURL(blob());
          const revoke = () => {
            image.removeEventListener("load", revoke);
            image.removeEventListener("error", revoke);
            URL.revokeObjectURL(url);
          };
          image.addEventListener("load", revoke);
          image.addEventListener("error", revoke);
          image.src = url; // ImageTile listens to the image: LOADED, EMPTY (0×0) or ERROR
        } else {
          // A worker's OffscreenCanvas tile: decode and draw.
          decodeTile(result).then(
            (bitmap) => {
              if (tile.disposed) return;
              image.width = bitmap.width;
              image.height = bitmap.height;
              image.getContext("2d").drawImage(bitmap, 0, 0);
              bitmap.close?.();
              tile.setState(TileState.LOADED);
            },
            () => {
              if (!tile.disposed) tile.setState(TileState.ERROR);
            },
          );
        }
      },
      (error) => {
        pending.delete(tile);
        if (controller.signal.aborted) {
          releaseAborted(tile);
          return;
        }
        tile.error = error; // the TileError, for tileloaderror listeners
        if (!tile.disposed) tile.setState(TileState.ERROR);
      },
    );
  };
}

/** Reads a fetched body the way ol/featureloader reads an XHR's response for `format`. */
function readSource(format, data) {
  const type = format.getType();
  if (type === "arraybuffer") return data.buffer.byteLength === data.byteLength ? data.buffer : data.slice().buffer;
  const text = new TextDecoder().decode(data);
  if (type === "json") return JSON.parse(text);
  if (type === "xml") return new DOMParser().parseFromString(text, "application/xml");
  return text;
}

/**
 * A `tileLoadFunction` for ol/source/VectorTile: sets the tile's loader, which fetches through
 * fetchTile, reads features with the tile's format and calls `tile.onLoad`, or `tile.onError`
 * on give-up. An empty tile loads with no features.
 */
export function createVectorTileLoadFunction(options) {
  const { load, map } = prepare(options);
  const pending = new Map();
  watchWanted(map, pending);

  return function tilefetchVectorTileLoad(tile, url) {
    tile.setLoader((extent, _resolution, projection) => {
      const controller = new AbortController();
      pending.set(tile, controller);
      load(url, controller.signal).then(
        (result) => {
          pending.delete(tile);
          if (tile.disposed) return;
          let features;
          let dataProjection;
          try {
            if (result.empty) {
              features = [];
            } else {
              const format = tile.getFormat();
              const source = readSource(format, result.data);
              features = format.readFeatures(source, { extent, featureProjection: projection });
              dataProjection = format.readProjection(source);
            }
          } catch (error) {
            tile.error = error;
            tile.onError();
            return;
          }
          tile.onLoad(features, dataProjection);
        },
        (error) => {
          pending.delete(tile);
          if (controller.signal.aborted) {
            releaseAborted(tile);
            return;
          }
          tile.error = error;
          if (!tile.disposed) tile.onError();
        },
      );
    });
  };
}

/** `{a-c}` / `{1-4}` (OpenLayers' mirror ranges) → `{s}` plus the subdomains. */
function expandRange(template) {
  const m = /\{([a-z])-([a-z])\}|\{(\d)-(\d)\}/.exec(template);
  if (!m) return { template, subdomains: null };
  const [from, to] = m[1] ? [m[1].charCodeAt(0), m[2].charCodeAt(0)] : [m[3].charCodeAt(0), m[4].charCodeAt(0)];
  const subdomains = [];
  for (let c = from; c <= to; c++) subdomains.push(String.fromCharCode(c));
  return { template: template.replace(m[0], "{s}"), subdomains };
}

/**
 * A loader for ol/source/ImageTile (and ol/source/DataTile): `(z, x, y, {signal}) =>
 * Promise<ImageBitmap>`. `template` has `{z}`, `{x}`, `{y}`, `{-y}` (needs OpenLayers' `maxY`),
 * `{s}` or `{a-c}` (mirrors). OpenLayers' signal cancels the tile when the map disposes it.
 * An empty tile resolves as a transparent 1×1 image.
 */
export function createImageTileLoader(template, options) {
  if (typeof template !== "string" || template === "") {
    throw new TypeError("tilefetch/openlayers: createImageTileLoader needs a URL template");
  }
  const { load, custom } = prepare(options);
  const { template: base, subdomains } = expandRange(template);

  return async function tilefetchImageTileLoader(z, x, y, loaderOptions) {
    let url = base.replace("{z}", String(z)).replace("{x}", String(x)).replace("{y}", String(y));
    if (url.includes("{-y}")) {
      const maxY = loaderOptions?.maxY ?? 2 ** z - 1;
      url = url.replace("{-y}", String(maxY - y));
    }
    const signal = loaderOptions?.signal ?? new AbortController().signal;
    const crossOrigin = loaderOptions?.crossOrigin ?? null;
    const { tile, image } = await loadTile(load, url, signal, { crossOrigin, custom, extra: subdomains ? { subdomains } : undefined });
    if (image) return image; // a server without CORS headers: an image element, as ol/source/ImageTile takes
    if (tile.empty) return createImageBitmap(new ImageData(1, 1));
    return decodeTile(tile);
  };
}
