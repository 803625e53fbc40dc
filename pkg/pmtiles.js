// tilefetch/pmtiles: a `Source` for the `pmtiles` package (a peer dependency) that reads an
// archive's byte ranges through fetchTile, so its header, directories and tiles are retried,
// checked and shared per host like any tile.
//
//   const archive = new PMTiles(new PMTilesSource("https://bucket.example.com/world.pmtiles"));
import { EtagMismatch } from "pmtiles";
import { fetchTile, TileClient, TileError } from "tilefetch";

/** Whether this platform's `Request` takes `cache: "reload"` (workerd's does not); asked once. */
let reloadable;
function takesReload() {
  if (reloadable === undefined) {
    try {
      new Request("http://127.0.0.1/", { cache: "reload" });
      reloadable = true;
    } catch {
      reloadable = false;
    }
  }
  return reloadable;
}

/** A signal that fires when either does (`AbortSignal.any` where the platform has it). */
function either(a, b) {
  if (typeof AbortSignal.any === "function") return AbortSignal.any([a, b]);
  const controller = new AbortController();
  for (const signal of [a, b]) {
    if (signal.aborted) controller.abort(signal.reason);
    else signal.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}

/** What `getBytes` resolves with: the body as an ArrayBuffer of its own. */
function bufferOf(data) {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength ? data.buffer : data.slice().buffer;
}

export class PMTilesSource {
  #url;
  #options;
  #client;
  // After the archive changed under a reader: every later read goes past the platform's HTTP
  // cache, which may hold ranges of the old archive (as the pmtiles FetchSource does).
  #reload = false;

  /**
   * `url`: the archive's URL. `options`: fetchTile options for every read (not `range`), plus
   * `client`, a TileClient shared with other layers; or a TileClient itself.
   */
  constructor(url, options) {
    if (typeof url !== "string") throw new TypeError("tilefetch/pmtiles: url must be a string");
    this.#url = url;
    this.#client = null;
    this.#options = {};
    if (options instanceof TileClient) {
      this.#client = options;
    } else if (options != null) {
      if (typeof options !== "object") throw new TypeError("tilefetch/pmtiles: options must be an object or a TileClient");
      const { client = null, ...rest } = options;
      if (client !== null && !(client instanceof TileClient)) {
        throw new TypeError("tilefetch/pmtiles: options.client must be a TileClient");
      }
      if (rest.range !== undefined) throw new TypeError("tilefetch/pmtiles: options.range is set per read");
      this.#client = client;
      this.#options = rest;
    }
  }

  /** The archive's URL: what `pmtiles`' Protocol and caches know the archive by. */
  getKey() {
    return this.#url;
  }

  /**
   * `length` bytes from `offset`. Rejects with pmtiles' EtagMismatch when the archive changed:
   * its strong ETag is no longer `etag`, or the range is past its end (416); pmtiles then reads
   * the header again. Else rejects as fetchTile does.
   */
  async getBytes(offset, length, signal, etag) {
    const options = { ...this.#options, range: { offset, length } };
    if (signal) options.signal = options.signal ? either(options.signal, signal) : signal;
    if (this.#reload && options.cache === undefined && takesReload()) options.cache = "reload";
    let tile;
    try {
      tile = await (this.#client ? this.#client.fetchTile(this.#url, options) : fetchTile(this.#url, options));
    } catch (error) {
      // A range past the end: the archive is shorter than the header read said, so it changed
      // (as pmtiles' FetchSource reads a 416).
      if (error instanceof TileError && error.status === 416) {
        this.#reload = true;
        throw new EtagMismatch(`the archive changed: bytes ${offset}… are past its end`);
      }
      throw error;
    }
    let tag = tile.headers.get("etag");
    if (tag?.startsWith("W/")) tag = null;
    if (etag && tag && tag !== etag) {
      this.#reload = true;
      throw new EtagMismatch(`the archive changed: ETag ${tag}, read as ${etag}`);
    }
    return {
      data: bufferOf(tile.data),
      etag: tag ?? undefined,
      cacheControl: tile.headers.get("cache-control") ?? undefined,
      expires: tile.headers.get("expires") ?? undefined,
    };
  }
}
