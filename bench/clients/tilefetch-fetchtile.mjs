// tilefetch's top-level fetchTile as the README's first example: no options but the signal (the
// interactive preset: 100 ms first backoff ceiling, 2 s cap, 4 s per attempt, 6 s deadline,
// full jitter), through the package's default client. The module comes in as `tilefetch` so the
// same adapter runs on pkg/node.js in Node and pkg/browser.js in Chromium.
export const label = "tilefetch fetchTile";
export const anchor = "tilefetch";
export const config = "`fetchTile(url, { signal })` (README: interactive preset, default client)";

export function create({ tilefetch }) {
  return {
    async get(url, signal) {
      return (await tilefetch.fetchTile(url, { signal })).data;
    },
  };
}
