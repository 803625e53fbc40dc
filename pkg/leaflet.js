// tilefetch/leaflet: an L.TileLayer that loads every tile through fetchTile. Leaflet is a peer
// dependency and is passed in (`createTileLayer(L, ...)`), never imported here.
import { adapterOptions } from "./adapter-options.js";
import { decodeTile } from "./decode.js";
import { FETCH_TILE_OPTIONS } from "./gen/options.js";
import { copyKeptElement, keepsElement, likelyImage, loadTile } from "./without-cors.js";

/** Option names Leaflet's TileLayer takes too: Leaflet keeps them and passes them on below. */
const LEAFLET_SHARES = new Set(["referrerPolicy", "subdomains"]);
/** Whether `key` goes to fetchTile; every other key is a Leaflet TileLayer option. */
const isFetchKey = (key) => FETCH_TILE_OPTIONS.includes(key) && !LEAFLET_SHARES.has(key);

// A transparent 1×1 GIF for empty tiles. Not Leaflet's emptyImageUrl: Leaflet ignores tiles whose
// src is that one (it marks removed tiles).
const EMPTY_TILE = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

/**
 * An L.TileLayer whose tiles load through fetchTile (or `options.client`, a TileClient; or pass a
 * TileClient as `options.client` to share per-host state between layers).
 *
 * `options`: Leaflet TileLayer options and fetchTile options in one object (fetchTile's are
 * recognised by name; `subdomains` serves both: Leaflet's `{s}` becomes tilefetch's mirrors, so
 * a retry goes to the next subdomain). Tiles that leave the view (`tileunload`) or are dropped
 * on zoom (`tileabort`) are given up, whether in flight, queued or sleeping before a retry: a
 * request the server has lands into the client's recent tiles while no other request waits
 * for its connection, else it is aborted (`whenAbandoned: "yield"`, unless the options say
 * otherwise). A give-up calls `done(error)`, so `tileerror` fires with the TileError as `error`.
 */
export function createTileLayer(L, urlTemplate, options = {}) {
  const Layer = routeTileLayer(L);
  if (typeof urlTemplate !== "string" || urlTemplate === "") {
    throw new TypeError("tilefetch/leaflet: createTileLayer needs a URL template");
  }
  return new Layer(urlTemplate, options);
}

/**
 * Leaflet's WMS layer (`L.tileLayer.wms(url, options)`: its WMS parameters, `crs`, `uppercase`
 * and TileLayer options) whose tiles load through fetchTile as `createTileLayer`'s do, with
 * fetchTile options in the same object. Each tile is one GetMap of its BBOX.
 */
export function createWmsLayer(L, url, options = {}) {
  if (typeof L?.TileLayer?.WMS !== "function") {
    throw new TypeError("tilefetch/leaflet: pass Leaflet (L) as the first argument");
  }
  if (typeof url !== "string" || url === "") {
    throw new TypeError("tilefetch/leaflet: createWmsLayer needs the service's URL");
  }
  return new (routeTileLayer(L, L.TileLayer.WMS))(url, options);
}

/** The routed subclass of each layer class, made once. */
const routedClasses = new WeakMap();

/**
 * A subclass of `Base` (`L.TileLayer` or any class a plugin derives from it: WMTS, a layer in a
 * national projection, …) whose tiles load through fetchTile as `createTileLayer`'s do. Its
 * constructor takes what `Base`'s does, with fetchTile options (or `client`) beside the layer's
 * own in its options, the last argument; `Base` builds each tile's URL, tilefetch loads it.
 */
export function routeTileLayer(L, Base = L?.TileLayer) {
  if (!L || typeof L.TileLayer?.extend !== "function") {
    throw new TypeError("tilefetch/leaflet: pass Leaflet (L) as the first argument");
  }
  if (typeof Base !== "function" || !(Base === L.TileLayer || Base.prototype instanceof L.TileLayer)) {
    throw new TypeError("tilefetch/leaflet: routeTileLayer takes L.TileLayer or a class derived from it");
  }
  let Routed = routedClasses.get(Base);
  if (Routed) return Routed;
  Routed = Base.extend({
    initialize(...args) {
      const last = args.length - 1;
      const { layerOptions, load, crossOrigin } = splitOptions(last >= 0 ? args[last] : undefined);
      if (last >= 0) args[last] = layerOptions;
      else args.push(layerOptions);
      Base.prototype.initialize.apply(this, args);
      const pending = new WeakMap(); // tile element -> AbortController
      this._tilefetch = { load, pending, crossOrigin };
      this.on("tileunload", (e) => abortTile(pending, e.tile));
      this.on("tileabort", (e) => abortTile(pending, e.tile));
    },

    // Keep `{s}` in the URL: tilefetch expands it over `subdomains`, one mirror per attempt.
    _getSubdomain() {
      return "{s}";
    },

    createTile(coords, done) {
      const url = this.getTileUrl(coords);
      const subdomains = url.includes("{s}") ? [...this.options.subdomains].map(String) : null;
      const { load, pending } = this._tilefetch;
      const controller = new AbortController();
      const errorTileUrl = this.options.errorTileUrl;
      // A canvas that takes the tile once decoded off the main thread (createImageBitmap): no
      // object URL for the browser to load back, no decode while painting. The bitmap is handed
      // over, not drawn: a "bitmaprenderer" canvas shows it as it is (drawing it into a 2D canvas
      // measured slower against Leaflet's own <img> loader in the map view). With an
      // errorTileUrl, an <img> that can show it; and for a tile that will most likely come as an
      // image (a server not known yet to send CORS headers: a first view's tiles, and those tiles
      // shown again), an <img> its image loads into, as Leaflet's own loader loads it, where a
      // canvas would have it copied in on the main thread (RESULTS.md "Map view over HTTP/2").
      const canvasTile = !errorTileUrl && typeof createImageBitmap === "function" && !likelyImage(url, this._tilefetch.crossOrigin);
      const tile = document.createElement(canvasTile ? "canvas" : "img");
      if (canvasTile) {
        tile.width = tile.height = 1;
        tile.complete = false; // what Leaflet's _abortLoading asks of an <img>
        // leaflet.css gives img tiles this (against Chromium's hairline seams between tiles).
        tile.style.mixBlendMode = "plus-lighter";
      } else {
        tile.alt = "";
        // As Leaflet's own <img> tiles: an image's address loaded again goes with the layer's policy.
        if (typeof this.options.referrerPolicy === "string") tile.referrerPolicy = this.options.referrerPolicy;
      }
      tile.setAttribute("role", "presentation");
      pending.set(tile, controller);
      // No URL in the message: it may carry a key (the core's errors show it redacted).
      const failed = () => new Error("tilefetch/leaflet: the tile's image did not decode");

      load(url, controller.signal, subdomains, canvasTile ? null : tile).then(
        ({ tile: result, image }) => {
          if (pending.get(tile) !== controller) return; // removed meanwhile
          pending.delete(tile);
          if (image) {
            // A server without CORS headers: its image, as Leaflet's own loader shows it. The
            // <img> it loaded into; else drawn into the canvas (which may show a cross-origin
            // image; only reading it back is refused), or the <img> takes its address, which
            // the browser has loaded already (a retry's image, or a tile shown before).
            let error = null;
            if (canvasTile) {
              try {
                tile.width = image.naturalWidth;
                tile.height = image.naturalHeight;
                tile.getContext("2d").drawImage(image, 0, 0);
              } catch {
                error = failed();
              }
              tile.complete = true;
              done(error, tile);
            } else if (image === tile) {
              done(null, tile); // loaded into the tile itself
            } else {
              tile.onload = tile.onerror = (event) => {
                tile.onload = tile.onerror = null;
                const error = event.type === "error" ? failed() : null;
                if (error && errorTileUrl) tile.src = errorTileUrl;
                done(error, tile);
              };
              tile.src = image.src;
            }
            return;
          }
          if (canvasTile) {
            if (result.empty) {
              tile.complete = true;
              done(null, tile); // a blank canvas: transparent
              return;
            }
            decodeTile(result).then(
              (bitmap) => {
                // Removed while decoding (unloaded, or aborted on zoom: Leaflet marks an aborted
                // <img> by its src attribute, which a canvas has not): no done(), which would
                // mark a newer tile at the same place as loaded.
                if (!tile.parentNode) {
                  bitmap.close?.();
                  return;
                }
                let error = null;
                try {
                  tile.width = bitmap.width;
                  tile.height = bitmap.height;
                  const renderer = tile.getContext("bitmaprenderer");
                  if (renderer) renderer.transferFromImageBitmap(bitmap);
                  else tile.getContext("2d").drawImage(bitmap, 0, 0);
                } catch {
                  error = failed();
                } finally {
                  bitmap.close?.();
                }
                tile.complete = true;
                done(error, tile);
              },
              () => {
                tile.complete = true;
                if (tile.parentNode) done(failed(), tile);
              },
            );
            return;
          }
          if (result.empty) {
            tile.addEventListener("load", () => done(null, tile), { once: true });
            tile.src = EMPTY_TILE;
            return;
          }
          const objectUrl = URL.createObjectURL(new Blob([result.data], { type: result.contentType ?? "image/png" }));
          // Listeners, not onload/onerror: Leaflet's abort on a zoom replaces those, and the
          // object URL must still be revoked (its done() then meets Leaflet's aborted mark).
          let settled = false;
          const settle = (err) => {
            if (settled) return;
            settled = true;
            URL.revokeObjectURL(objectUrl);
            if (err && errorTileUrl) tile.src = errorTileUrl;
            done(err, tile);
          };
          tile.addEventListener("load", () => settle(null), { once: true });
          tile.addEventListener("error", () => settle(failed()), { once: true });
          tile.src = objectUrl;
        },
        (error) => {
          if (pending.get(tile) !== controller) return; // aborted by Leaflet: not an error
          pending.delete(tile);
          if (canvasTile) tile.complete = true;
          else if (errorTileUrl) tile.src = errorTileUrl;
          done(error, tile);
        },
      );
      return tile;
    },

    // A removed tile whose <img> is the image the page keeps for the tile shown again
    // (without-cors.js, `keepsElement`: a first view's tiles) is removed as it is: Leaflet's
    // TileLayer empties a removed tile's `src` to end its request, and it has none. A layer class
    // derived from it that removes tiles its own way removes them as it does, the image copied
    // first.
    _removeTile(key) {
      const el = this._tiles[key]?.el;
      if (el && keepsElement(el)) {
        if (Base.prototype._removeTile === L.TileLayer.prototype._removeTile) return L.GridLayer.prototype._removeTile.call(this, key);
        copyKeptElement(el);
      }
      return Base.prototype._removeTile.call(this, key);
    },

    // Leaflet aborts loading tiles of other zoom levels only when their <img> is incomplete; ours
    // have no src while fetching, so abort those here.
    _abortLoading() {
      for (const key of Object.keys(this._tiles)) {
        const entry = this._tiles[key];
        if (entry.coords.z === this._tileZoom || !this._tilefetch.pending.has(entry.el)) continue;
        abortTile(this._tilefetch.pending, entry.el);
        L.DomUtil.remove(entry.el);
        delete this._tiles[key];
        this.fire("tileabort", { tile: entry.el, coords: entry.coords });
      }
      Base.prototype._abortLoading.call(this);
    },
  });
  routedClasses.set(Base, Routed);
  return Routed;
}

/**
 * A layer's options: the fetchTile options and client, as a load of a tile's URL, and the rest
 * for the layer, with what Leaflet's own <img> tiles would be given also given to a server's
 * tiles without CORS headers.
 */
function splitOptions(options) {
  const { fetchOptions, rest: layerOptions, load: loadWith } = adapterOptions("leaflet", options ?? {}, isFetchKey, { whenAbandoned: "yield" });
  if (typeof layerOptions.referrerPolicy === "string") fetchOptions.referrerPolicy = layerOptions.referrerPolicy;
  if (layerOptions.crossOrigin === "use-credentials" && fetchOptions.credentials === undefined) {
    fetchOptions.credentials = "include";
  }
  const crossOrigin = layerOptions.crossOrigin || layerOptions.crossOrigin === "" ? (layerOptions.crossOrigin === true ? "" : layerOptions.crossOrigin) : null;
  const imageSettings = {
    crossOrigin,
    referrerPolicy: typeof layerOptions.referrerPolicy === "string" ? layerOptions.referrerPolicy : undefined,
    custom: fetchOptions.fetch,
  };
  const load = (url, signal, subdomains, element) =>
    loadTile(loadWith, url, signal, { ...imageSettings, element, decoded: false, extra: subdomains ? { subdomains } : undefined });
  return { layerOptions, load, crossOrigin };
}

/** Aborts the load of tile element `el`, if it is loading. */
function abortTile(pending, el) {
  const controller = pending.get(el);
  if (controller) {
    pending.delete(el);
    controller.abort(new DOMException("tile removed", "AbortError"));
  }
}
