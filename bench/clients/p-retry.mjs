// p-retry around fetch as its README's usage example does: the whole request, body included,
// in the retried function; `AbortError` for 404 ("Abort retrying if the resource doesn't
// exist"); any other `!response.ok` throws; `retries: 5` as in the README's examples, with the
// default backoff (minTimeout 1000 ms, factor 2, no randomisation); `signal` stops retrying.
import pRetry, { AbortError } from "p-retry";

export const label = "p-retry + fetch";
export const anchor = "p-retry";
export const config = "`pRetry(run, { retries: 5, signal })`, AbortError on 404 (README example), default backoff 1 s × 2^n";

export function create() {
  return {
    get(url, signal) {
      const run = async () => {
        const response = await fetch(url, { signal });
        if (response.status === 404) throw new AbortError(response.statusText);
        if (!response.ok) throw new Error(response.statusText);
        return new Uint8Array(await response.arrayBuffer());
      };
      return pRetry(run, { retries: 5, signal });
    },
  };
}
