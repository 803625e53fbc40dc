// tilefetch/maplibre: a MapLibre GL JS (≥ 4) protocol whose requests load through fetchTile.
//
//   maplibregl.addProtocol("tilefetch", createProtocol({ deadlineMs: 8000 }));
//   // style: "tiles": ["tilefetch://https://tiles.example.com/{z}/{x}/{y}.png"]
//
// MapLibre is a peer dependency; nothing is imported from it.
import { fetchTile, TileClient } from "./browser.js";

const SCHEME = /^[a-z][a-z0-9+.-]*:\/\/(?=[a-z][a-z0-9+.-]*:)/i;

/**
 * The action for `maplibregl.addProtocol(scheme, action)`: `(requestParameters, abortController)
 * => Promise<{data, cacheControl?, expires?}>`. `options`: fetchTile options, optionally with
 * `client` (a TileClient shared by maps and layers), or a TileClient itself.
 */
export function createProtocol(options) {
  let client = null;
  const fetchOptions = {};
  if (options instanceof TileClient) {
    client = options;
  } else if (options != null) {
    if (typeof options !== "object") throw new TypeError("tilefetch/maplibre: options must be an object or a TileClient");
    for (const [k, v] of Object.entries(options)) {
      if (k === "client") client = v;
      else fetchOptions[k] = v;
    }
    if (client != null && !(client instanceof TileClient)) {
      throw new TypeError("tilefetch/maplibre: options.client must be a TileClient");
    }
  }
  const userSignal = fetchOptions.signal ?? null;

  return async function tilefetchProtocol(requestParameters, abortController) {
    const url = String(requestParameters.url).replace(SCHEME, "");
    const signal = abortController?.signal ?? new AbortController().signal;
    const opts = { ...fetchOptions, signal: userSignal ? AbortSignal.any([userSignal, signal]) : signal };
    if (requestParameters.headers && opts.headers === undefined) opts.headers = requestParameters.headers;
    if (requestParameters.credentials && opts.credentials === undefined) opts.credentials = requestParameters.credentials;
    let tile;
    try {
      tile = await (client ? client.fetchTile(url, opts) : fetchTile(url, opts));
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
