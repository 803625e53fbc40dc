// tilefetch/maplibre: a MapLibre GL JS (5 or 6) protocol whose requests load through fetchTile.
//
//   maplibregl.addProtocol("tilefetch", createProtocol({ deadlineMs: 8000 }));
//   // style: "tiles": ["tilefetch://https://tiles.example.com/{z}/{x}/{y}.png"]
//
// MapLibre is a peer dependency; nothing is imported from it.
import { adapterOptions } from "./adapter-options.js";
import { decodeTile } from "./decode.js";

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\/(?=[a-z][a-z0-9+.-]*:)/i;

/**
 * The action for `maplibregl.addProtocol(scheme, action)`: `(requestParameters, abortController)
 * => Promise<{data, cacheControl?, expires?}>`. `options`: fetchTile options, optionally with
 * `client` (a TileClient shared by maps and layers), or a TileClient itself.
 */
export function createProtocol(options) {
  // A tile MapLibre cancels (one at a view's edge, as the view moves on) lands into the
  // client's recent tiles while nothing waits for its connection, so a pan back costs no second
  // request; else it is aborted, as MapLibre's own loader aborts it.
  const { fetchOptions, load } = adapterOptions("maplibre", options, undefined, { whenAbandoned: "yield" });

  return async function tilefetchProtocol(requestParameters, abortController) {
    const url = String(requestParameters.url).replace(SCHEME, "");
    const signal = abortController?.signal ?? new AbortController().signal;
    // MapLibre's own request headers and credentials, unless the options set them.
    const extra = {};
    if (requestParameters.headers && fetchOptions.headers === undefined) extra.headers = requestParameters.headers;
    if (requestParameters.credentials && fetchOptions.credentials === undefined) extra.credentials = requestParameters.credentials;
    let tile;
    try {
      tile = await load(url, signal, extra);
    } catch (error) {
      // MapLibre ignores errors named AbortError; a TileError keeps `status`, so a 404 is
      // treated as "no tile here" (no error event, parent tiles are overzoomed).
      if (error?.kind === "aborted" || signal.aborted) throw new DOMException(error?.message ?? "aborted", "AbortError");
      throw error;
    }
    const cacheControl = tile.headers.get("cache-control") ?? undefined;
    const expires = tile.headers.get("expires") ?? undefined;
    const type = requestParameters.type;
    let data;
    if (tile.empty) {
      data = type === "image" ? await createImageBitmap(new ImageData(1, 1)) : type === "json" ? null : type === "string" ? "" : new ArrayBuffer(0);
    } else if (type === "image" && typeof createImageBitmap === "function") {
      // Decoded here, as MapLibre takes an image from a protocol: its own decode of bytes goes
      // through a Blob, which the browser registers and reads back (decode.js).
      data = await decodeTile(tile);
      if (signal.aborted) {
        data.close();
        throw new DOMException("aborted", "AbortError");
      }
    } else if (type === "json") {
      data = JSON.parse(new TextDecoder().decode(tile.data));
    } else if (type === "string") {
      data = new TextDecoder().decode(tile.data);
    } else {
      const bytes = tile.data;
      data = bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes.buffer : bytes.slice().buffer;
    }
    return { data, cacheControl, expires };
  };
}
