// A tilefetch TileClient whose per-host limit is fixed at `limit` (`maxConcurrent` set), every
// other setting its default (interactive preset, FIFO queue): the rows that separate the
// default's adaptive limit from what tilefetch itself costs.
export function fixedLimitClient(limit, label, config) {
  return {
    label,
    anchor: "tilefetch",
    config,
    create({ tilefetch }) {
      const client = new tilefetch.TileClient({ maxConcurrent: limit });
      return {
        async get(url, signal) {
          return (await client.fetchTile(url, { signal })).data;
        },
        close() {
          client.free();
        },
      };
    },
  };
}
