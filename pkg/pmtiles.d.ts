/**
 * tilefetch/pmtiles: a `Source` for the `pmtiles` package (4.x, a peer dependency) that reads a
 * PMTiles archive's byte ranges through {@link fetchTile}: the header, directories and tiles are
 * retried under the deadline, checked against their byte range, and share per-host state.
 *
 * ```js
 * import { PMTiles, Protocol } from "pmtiles";
 * import { PMTilesSource } from "tilefetch/pmtiles";
 * const protocol = new Protocol();
 * maplibregl.addProtocol("pmtiles", protocol.tile);
 * protocol.add(new PMTiles(new PMTilesSource("https://bucket.example.com/world.pmtiles")));
 * // style source: { type: "raster", url: "pmtiles://https://bucket.example.com/world.pmtiles" }
 * ```
 */
import type { RangeResponse, Source } from "pmtiles";
import type { FetchTileOptions, TileClient } from "./index.d.ts";

/** fetchTile options for every read (`range` is set per read), optionally with a shared `client`. */
export interface PMTilesSourceOptions extends Omit<FetchTileOptions, "range"> {
  client?: TileClient;
}

export declare class PMTilesSource implements Source {
  /** Throws a TypeError for a `url` that is no string or a `client` that is no TileClient. */
  constructor(url: string, options?: PMTilesSourceOptions | TileClient);
  /** The archive's URL. */
  getKey(): string;
  /**
   * `length` bytes from `offset`, as a Range request through fetchTile. Rejects with pmtiles'
   * `EtagMismatch` when the archive changed: its strong ETag is no longer `etag`, or the range is
   * past its end (416); pmtiles then reads the header again, and later reads go past the HTTP
   * cache. Else with a TileError (kind "range-unsupported": the server ignores Range and the
   * archive is over `maxBytes`).
   */
  getBytes(offset: number, length: number, signal?: AbortSignal, etag?: string): Promise<RangeResponse>;
}
