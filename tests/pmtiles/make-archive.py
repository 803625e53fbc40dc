"""Writes a raster PMTiles archive with the PyPI `pmtiles` writer, for the PMTiles tests.

    python make-archive.py OUT.pmtiles --maxzoom 4 [--variant 0] [--tile-bytes 0]

Every tile of z0..maxzoom is its own PNG (a colour from its coordinates and `variant`, so two
variants differ in every tile), 256 px square; `--tile-bytes N` pads each PNG with an ancillary
chunk to about N bytes, for an archive of a given size.
"""

import argparse
import struct
import zlib

from pmtiles.tile import Compression, TileType, zxy_to_tileid
from pmtiles.writer import write


def chunk(kind, data):
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body) & 0xFFFFFFFF)


def tile_png(z, x, y, variant, pad):
    red = (z * 50 + variant * 97) % 256
    green = (x * 37 + variant * 53) % 256
    blue = (y * 59 + variant * 29) % 256
    row = b"\x00" + bytes((red, green, blue)) * 256
    raw = row * 256
    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 256, 256, 8, 2, 0, 0, 0))
    if pad:
        png += chunk(b"tEXt", b"pad\x00" + b"." * pad)
    return png + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--maxzoom", type=int, default=4)
    parser.add_argument("--variant", type=int, default=0)
    parser.add_argument("--tile-bytes", type=int, default=0)
    args = parser.parse_args()
    with write(args.out) as writer:
        tiles = []
        for z in range(args.maxzoom + 1):
            for x in range(1 << z):
                for y in range(1 << z):
                    tiles.append((zxy_to_tileid(z, x, y), z, x, y))
        for tile_id, z, x, y in sorted(tiles):
            writer.write_tile(tile_id, tile_png(z, x, y, args.variant, args.tile_bytes))
        writer.finalize(
            {
                "tile_type": TileType.PNG,
                "tile_compression": Compression.NONE,
                "min_lon_e7": -1800000000,
                "min_lat_e7": -850511287,
                "max_lon_e7": 1800000000,
                "max_lat_e7": 850511287,
                "center_zoom": 0,
                "center_lon_e7": 0,
                "center_lat_e7": 0,
            },
            {"name": "tilefetch test archive", "variant": args.variant},
        )


main()
