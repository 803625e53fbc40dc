// fetch-retry as its README shows: wrap the platform fetch, 3 retries (its default), the
// README's "Exponential backoff" example for `retryDelay` (2^attempt · 1000 ms) and its
// "Retry on 503" example for `retryOn` (network errors are retried as well by default). It
// resolves with the last Response; a non-2xx one is then a failure, as with fetch.
import fetchRetry from "fetch-retry";

export const label = "fetch-retry";
export const anchor = "fetch-retry";
export const config = "`fetchRetry(fetch, { retries: 3, retryDelay: (n) => 2 ** n * 1000, retryOn: [503] })` (README examples)";

export function create() {
  const fetchWithRetry = fetchRetry(fetch, { retries: 3, retryDelay: (attempt) => 2 ** attempt * 1000, retryOn: [503] });
  return {
    async get(url, signal) {
      const response = await fetchWithRetry(url, { signal });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      return new Uint8Array(await response.arrayBuffer());
    },
  };
}
