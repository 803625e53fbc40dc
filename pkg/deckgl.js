// tilefetch/deckgl: a `getTileData` for deck.gl's TileLayer (@deck.gl/geo-layers 9) that loads
// each tile through fetchTile.
//
//   new TileLayer({ data: "https://tiles.example.com/{z}/{x}/{y}.png", getTileData: createGetTileData({ deadlineMs: 8000 }), … })
//
// deck.gl is a peer dependency; nothing is imported from it.
import { adapterOptions } from "./adapter-options.js";

/**
 * `getTileData(tile)` for a TileLayer whose `data` is a URL template (deck.gl expands it into
 * `tile.url`). `options`: fetchTile options, optionally with `client` (a TileClient shared by
 * layers and maps) and `parse(bytes, tile, response)`; or a TileClient itself.
 *
 * Resolves with an ImageBitmap for an image (by its type, or its first bytes when the type says
 * nothing), the `parse` result when given, the bytes otherwise;
 * `null` for an empty tile (`emptyOn`: nothing to draw). deck.gl's `tile.signal` aborts the call
 * (a tile that left the view); a give-up rejects with the TileError, which deck.gl hands to
 * `onTileError`.
 */
export function createGetTileData(options) {
  const { rest, load } = adapterOptions("deckgl", options, (k) => k !== "parse");
  const parse = rest.parse ?? null;
  if (parse !== null && typeof parse !== "function") throw new TypeError("tilefetch/deckgl: options.parse must be a function");

  return async function tilefetchGetTileData(tile) {
    const url = tile?.url;
    if (typeof url !== "string" || url === "") {
      throw new TypeError("tilefetch/deckgl: tile.url is missing: give the TileLayer a URL template as `data`");
    }
    const signal = tile.signal ?? new AbortController().signal;
    const response = await load(url, signal);
    if (response.empty) return null;
    if (parse) return parse(response.data, tile, response);
    if (isImage(response)) {
      // As deck.gl's own image loader decodes (its BitmapLayer blends straight alpha).
      return createImageBitmap(new Blob([response.data], { type: response.contentType ?? "" }), { premultiplyAlpha: "none" });
    }
    return response.data;
  };
}

/**
 * Whether the tile is an image createImageBitmap decodes: its type says so (an SVG excepted, which
 * it does not decode), or its first bytes do (a PNG, JPEG, GIF or WebP sent as
 * application/octet-stream or untyped, as object stores send them; deck.gl's own loader sniffs too).
 */
function isImage({ contentType, data: b }) {
  const type = contentType?.split(";")[0].trim().toLowerCase() ?? "";
  if (type.startsWith("image/")) return type !== "image/svg+xml";
  const starts = (...bytes) => bytes.every((v, i) => b[i] === v);
  return (
    starts(0x89, 0x50, 0x4e, 0x47) || // PNG
    starts(0xff, 0xd8, 0xff) || // JPEG
    starts(0x47, 0x49, 0x46, 0x38) || // GIF8
    (starts(0x52, 0x49, 0x46, 0x46) && b[8] === 0x57 && b[9] === 0x45 && b[10] === 0x42 && b[11] === 0x50) // RIFF…WEBP
  );
}
