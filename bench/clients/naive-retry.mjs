// The retry loop people write by hand: up to 3 attempts, back to back, on any thrown error or
// non-2xx status. No library, so no docs to follow; it is here to show what retrying without a
// delay does to a struggling server.
export const label = "naive immediate retry";
export const anchor = null;
export const config = "3 attempts, no delay, retry on any error or `!response.ok`";

const ATTEMPTS = 3;

export function create() {
  return {
    async get(url, signal) {
      let last;
      for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
        try {
          const response = await fetch(url, { signal });
          if (!response.ok) throw new Error(`HTTP ${response.status}`);
          return new Uint8Array(await response.arrayBuffer());
        } catch (error) {
          last = error;
          if (signal.aborted) break; // the caller gave up: another attempt would be sent to no one
        }
      }
      throw last;
    },
  };
}
