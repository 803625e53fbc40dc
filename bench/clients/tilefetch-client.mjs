// tilefetch's TileClient as the README's TileClient example: the interactive preset and
// `queueOrder: "lifo"` ("a panning map wants the newest tiles first"), everything else default
// (16 attempts in flight per host, breaker 10 failures / 500–1000 ms, retry budget 50 %, rate
// learned from 429s). One client per run, as one per page.
export const label = "tilefetch TileClient";
export const anchor = "tilefetch";
export const config =
  '`new TileClient({ preset: "interactive", queueOrder: "lifo" })` (README example). LIFO serves the newest ' +
  "call first, as a panning map wants; in a batch that cancels nothing, the oldest queued tiles can wait past their deadline";

export function create({ tilefetch }) {
  const client = new tilefetch.TileClient({ preset: "interactive", queueOrder: "lifo" });
  return {
    async get(url, signal) {
      return (await client.fetchTile(url, { signal })).data;
    },
    close() {
      client.free();
    },
  };
}
