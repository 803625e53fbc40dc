// The archives the PMTiles tests read: written by the `pmtiles` tools from PyPI (make-archive.py,
// run in the venv scripts/setup.sh makes), kept in test-output/pmtiles/ per set of parameters.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { PMTiles } from "pmtiles";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** An archive of z0..maxzoom raster tiles (`variant`: other colours; `tileBytes`: bigger tiles). */
export function makeArchive({ maxzoom = 4, variant = 0, tileBytes = 0 } = {}) {
  const dir = `${root}test-output/pmtiles`;
  const file = `${dir}/z${maxzoom}-v${variant}-b${tileBytes}.pmtiles`;
  if (!existsSync(file)) {
    mkdirSync(dir, { recursive: true });
    execFileSync(`${root}.venv-pmtiles/bin/python`, [
      `${root}tests/pmtiles/make-archive.py`,
      file,
      "--maxzoom",
      String(maxzoom),
      "--variant",
      String(variant),
      "--tile-bytes",
      String(tileBytes),
    ]);
  }
  return readFileSync(file);
}

/** Every [z, x, y] of z0..maxzoom. */
export function allTiles(maxzoom) {
  const tiles = [];
  for (let z = 0; z <= maxzoom; z++) {
    for (let x = 0; x < 1 << z; x++) for (let y = 0; y < 1 << z; y++) tiles.push([z, x, y]);
  }
  return tiles;
}

/** A pmtiles Source over bytes in memory: the archive as it is, for reference reads. */
export function memorySource(bytes, key = "memory") {
  return {
    getKey: () => key,
    getBytes: async (offset, length) => ({ data: bytes.buffer.slice(bytes.byteOffset + offset, bytes.byteOffset + offset + length) }),
  };
}

/** Each tile's bytes as the archive holds them, by "z/x/y". */
export async function referenceTiles(bytes, maxzoom) {
  const archive = new PMTiles(memorySource(bytes));
  const tiles = new Map();
  for (const [z, x, y] of allTiles(maxzoom)) tiles.set(`${z}/${x}/${y}`, Buffer.from((await archive.getZxy(z, x, y)).data));
  return tiles;
}

/**
 * Reads every tile of z0..maxzoom through `archive` at once; resolves with the tiles delivered
 * (by "z/x/y") and the errors (by "z/x/y").
 */
export async function readEvery(archive, maxzoom) {
  const delivered = new Map();
  const failed = new Map();
  await Promise.all(
    allTiles(maxzoom).map(async ([z, x, y]) => {
      try {
        const tile = await archive.getZxy(z, x, y);
        if (tile) delivered.set(`${z}/${x}/${y}`, Buffer.from(tile.data));
        else failed.set(`${z}/${x}/${y}`, new Error("no tile"));
      } catch (error) {
        failed.set(`${z}/${x}/${y}`, error);
      }
    }),
  );
  return { delivered, failed };
}
