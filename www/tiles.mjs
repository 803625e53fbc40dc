// Demo tiles: real 256×256 RGB PNGs with a visible grid and the tile's z/x/y written in a tiny
// 5×7 bitmap font, so a screenshot shows which tile is where (and a missing one is a hole).
// Deterministic and cached. Node built-ins and the fault server's PNG encoder only.
import { encodePngRgb } from "../tests/server/fault-server.mjs";

export const SIZE = 256;

// 5×7 glyphs, one string of 7 rows per character ("#" = ink).
const FONT = {
  0: [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
  1: ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
  2: [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
  3: ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
  4: ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
  5: ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
  6: ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
  7: ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
  8: [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
  9: [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
  "/": ["     ", "    #", "   # ", "  #  ", " #   ", "#    ", "     "],
  z: ["     ", "     ", "#####", "   # ", "  #  ", " #   ", "#####"],
  x: ["     ", "     ", "#   #", " # # ", "  #  ", " # # ", "#   #"],
  y: ["     ", "     ", "#   #", "#   #", " ####", "    #", " ### "],
  "=": ["     ", "     ", "#####", "     ", "#####", "     ", "     "],
  " ": ["     ", "     ", "     ", "     ", "     ", "     ", "     "],
};

function hash32(str) {
  let h = 0x811c9dc5;
  for (let i = 0; i < str.length; i++) {
    h ^= str.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return (h ^ (h >>> 16)) >>> 0;
}

/** Draws `text` into an RGB buffer (width SIZE) with its top-left corner at (x0, y0). */
function drawText(buf, text, x0, y0, scale, rgb) {
  let cx = x0;
  for (const ch of text) {
    const glyph = FONT[ch] ?? FONT[" "];
    for (let gy = 0; gy < 7; gy++) {
      for (let gx = 0; gx < 5; gx++) {
        if (glyph[gy][gx] !== "#") continue;
        for (let sy = 0; sy < scale; sy++) {
          const py = y0 + gy * scale + sy;
          if (py < 0 || py >= SIZE) continue;
          for (let sx = 0; sx < scale; sx++) {
            const px = cx + gx * scale + sx;
            if (px < 0 || px >= SIZE) continue;
            buf.set(rgb, (py * SIZE + px) * 3);
          }
        }
      }
    }
    cx += 6 * scale;
  }
}

const textWidth = (text, scale) => text.length * 6 * scale - scale;

/** The RGB pixels (SIZE × SIZE × 3) of tile z/x/y. */
export function tilePixels(z, x, y) {
  const key = `${z}/${x}/${y}`;
  const h = hash32(key);
  // A light pastel per tile (neighbours differ), a darker grid every 32 px, a dark 2-px border.
  const base = [170 + (h & 0x3f), 170 + ((h >>> 6) & 0x3f), 170 + ((h >>> 12) & 0x3f)];
  const grid = base.map((c) => Math.floor(c * 0.8));
  const edge = [40, 48, 64];
  const ink = [20, 24, 40];
  const buf = Buffer.alloc(SIZE * SIZE * 3);
  for (let py = 0; py < SIZE; py++) {
    for (let px = 0; px < SIZE; px++) {
      const border = px < 2 || py < 2 || px >= SIZE - 2 || py >= SIZE - 2;
      const line = px % 32 === 0 || py % 32 === 0;
      buf.set(border ? edge : line ? grid : base, (py * SIZE + px) * 3);
    }
  }
  // The z/x/y label, as big as fits, centred; a small "z=Z" caption above it.
  const scale = Math.max(1, Math.min(6, Math.floor((SIZE - 24) / (key.length * 6))));
  const w = textWidth(key, scale);
  const top = Math.floor((SIZE - 7 * scale) / 2);
  // A light box behind the label so it reads on any colour.
  for (let py = top - scale * 2; py < top + 7 * scale + scale * 2; py++) {
    for (let px = Math.floor((SIZE - w) / 2) - scale * 2; px < Math.floor((SIZE + w) / 2) + scale * 2; px++) {
      if (px >= 2 && py >= 2 && px < SIZE - 2 && py < SIZE - 2) buf.set([245, 245, 240], (py * SIZE + px) * 3);
    }
  }
  drawText(buf, key, Math.floor((SIZE - w) / 2), top, scale, ink);
  const caption = `z=${z} x=${x} y=${y}`;
  const cs = Math.max(1, Math.min(2, Math.floor((SIZE - 16) / (caption.length * 6))));
  drawText(buf, caption, 10, 10, cs, edge);
  return buf;
}

const cache = new Map();
const CACHE_MAX = 4096;

/** Tile z/x/y as a PNG Buffer (cached). */
export function labelledTilePng(z, x, y) {
  const key = `${z}/${x}/${y}`;
  let png = cache.get(key);
  if (png) return png;
  const px = tilePixels(z, x, y);
  const stride = SIZE * 3;
  png = encodePngRgb(SIZE, SIZE, (row) => px.subarray(row * stride, (row + 1) * stride), { tile: key });
  if (cache.size >= CACHE_MAX) cache.delete(cache.keys().next().value);
  cache.set(key, png);
  return png;
}
