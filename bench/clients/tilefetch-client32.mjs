// tilefetch's TileClient with the per-host limit raised to the harness's own concurrency (32).
// The default limit (16 per host, a fair share of a public tile server) caps the other two
// tilefetch rows below the 32 tiles the harness keeps in flight, which makes them slower on
// wall time by design; this row separates that choice from what tilefetch itself costs.
// Everything else is default (interactive preset, FIFO queue).
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
