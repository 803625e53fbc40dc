// tilefetch's TileClient with the per-host limit fixed at the harness's own concurrency (32):
// nothing waits in its queue, so this row shows what tilefetch itself costs, apart from the
// default's limit (16 per host to start, grown while the host answers as fast; see the fixed-16
// row). Everything else is default (interactive preset, FIFO queue).
export const label = "tilefetch TileClient, 32 per host";
export const anchor = "tilefetch";
export const config = "`new TileClient({ maxConcurrent: 32 })` (the harness's concurrency; defaults otherwise)";

export function create({ tilefetch }) {
  const client = new tilefetch.TileClient({ maxConcurrent: 32 });
  return {
    async get(url, signal) {
      return (await client.fetchTile(url, { signal })).data;
    },
    close() {
      client.free();
    },
  };
}
