// Plain fetch: one request, a non-2xx status is a failure, any 200 body is taken as the tile.
// The baseline every other client is measured against.
export const label = "raw fetch";
export const anchor = null;
export const config = "no retries; `!response.ok` throws";

export function create() {
  return {
    async get(url, signal) {
      const response = await fetch(url, { signal });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}
