// tilefetch's TileClient with the per-host limit set to its default's number (16), which fixes
// it: the limit every earlier release had. Beside the default row it shows what the adaptive
// limit changes, and that a server under strain sees no more at once than this one sent it.
// Everything else is default (interactive preset, FIFO queue).
export const label = "tilefetch TileClient, fixed 16 per host";
export const anchor = "tilefetch";
export const config = "`new TileClient({ maxConcurrent: 16 })` (the limit fixed at the default's number; defaults otherwise)";

export function create({ tilefetch }) {
  const client = new tilefetch.TileClient({ maxConcurrent: 16 });
  return {
    async get(url, signal) {
      return (await client.fetchTile(url, { signal })).data;
    },
    close() {
      client.free();
    },
  };
}
