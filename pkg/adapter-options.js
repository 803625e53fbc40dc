// What the three map adapters share: their options are fetchTile options, optionally with
// `client` (a TileClient shared by maps and layers), or a TileClient itself; each load runs under
// the map library's signal and the caller's own. Not a subpath of the package: the adapters'.
import { fetchTile, TileClient } from "./browser.js";

/**
 * Splits an adapter's `options`: `client`, the fetchTile options (keys for which `isFetchKey`
 * is true) and the rest (the adapter's or the map library's own). `load(url, signal, extra?)`
 * fetches through the client (or the default one) with the options, `extra` over them, and
 * `signal` joined with the caller's `signal` option; `defaults`: fetchTile options the adapter
 * asks for unless its options say otherwise. Throws a TypeError naming `adapter` for
 * options that are neither an object nor a TileClient, and for a `client` that is no TileClient.
 */
export function adapterOptions(adapter, options, isFetchKey = () => true, defaults = {}) {
  let client = null;
  const fetchOptions = {};
  const rest = {};
  if (options instanceof TileClient) {
    client = options;
  } else if (options != null) {
    if (typeof options !== "object") throw new TypeError(`tilefetch/${adapter}: options must be an object or a TileClient`);
    for (const [k, v] of Object.entries(options)) {
      if (k === "client") client = v ?? null;
      else if (isFetchKey(k)) fetchOptions[k] = v;
      else rest[k] = v;
    }
    if (client !== null && !(client instanceof TileClient)) {
      throw new TypeError(`tilefetch/${adapter}: options.client must be a TileClient`);
    }
  }
  const load = (url, signal, extra) => {
    const userSignal = fetchOptions.signal ?? null;
    const opts = { ...defaults, ...fetchOptions, ...extra, signal: userSignal ? AbortSignal.any([userSignal, signal]) : signal };
    return client ? client.fetchTile(url, opts) : fetchTile(url, opts);
  };
  return { fetchOptions, rest, load };
}
