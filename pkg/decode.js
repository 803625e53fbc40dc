// How the OpenLayers, Leaflet and MapLibre adapters decode a tile's bytes into an ImageBitmap, off
// the main thread. Not a subpath of the package: the adapters'.

/**
 * The tile's image as an ImageBitmap. Through WebCodecs' ImageDecoder where the platform has it
 * (it reads the bytes as they are, where createImageBitmap of a Blob first registers the bytes
 * with the browser and reads them back: bench/out/mapview-fast.json's phases, see RESULTS.md
 * "Map view, fast server"); createImageBitmap of a Blob otherwise, and for a type the decoder
 * does not take. Rejects when the bytes are no image either way.
 */
export function decodeTile(tile) {
  const type = tile.contentType ?? "image/png";
  if (typeof ImageDecoder === "function") {
    let decoder;
    try {
      decoder = new ImageDecoder({ data: tile.data, type });
    } catch {
      return fromBlob(tile.data, type); // a type it does not take
    }
    return decoder.decode().then(
      ({ image }) => {
        decoder.close();
        return createImageBitmap(image).finally(() => image.close());
      },
      () => {
        decoder.close();
        return fromBlob(tile.data, type);
      },
    );
  }
  return fromBlob(tile.data, type);
}

function fromBlob(data, type) {
  return createImageBitmap(new Blob([data], { type }));
}
