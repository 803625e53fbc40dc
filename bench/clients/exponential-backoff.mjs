// exponential-backoff as its README's usage: `backOff(() => request())` with the defaults
// (numOfAttempts 10, startingDelay 100 ms, timeMultiple 2, jitter "none", maxDelay Infinity).
// It has no signal option; its documented `retry` hook stops once the harness has aborted, or
// it would go on sleeping and re-sending into an aborted signal for ~100 s.
import { backOff } from "exponential-backoff";

export const label = "exponential-backoff";
export const anchor = "exponential-backoff";
export const config = "`backOff(request, { retry: () => !signal.aborted })`, README defaults (10 attempts, 100 ms × 2^n, no jitter)";

export function create() {
  return {
    get(url, signal) {
      const request = async () => {
        const response = await fetch(url, { signal });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return new Uint8Array(await response.arrayBuffer());
      };
      return backOff(request, { retry: () => !signal.aborted });
    },
  };
}
