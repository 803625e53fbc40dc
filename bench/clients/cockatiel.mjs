// cockatiel as the example at the top of its README: a retry policy (handleAll, maxAttempts 3,
// ExponentialBackoff with its defaults: decorrelated jitter, 128 ms initial, 30 s max) wrapped
// around a circuit breaker (handleAll, ConsecutiveBreaker(5), halfOpenAfter 10 s), one policy
// shared by every request of the client ("It's important that you reuse the same circuit
// breaker across multiple requests"). The request and body read run inside the policy, with the
// policy's signal (linked to the caller's).
import { retry, circuitBreaker, wrap, handleAll, ExponentialBackoff, ConsecutiveBreaker } from "cockatiel";

export const label = "cockatiel (retry + breaker)";
export const anchor = "cockatiel";
export const config =
  "`wrap(retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() }), circuitBreaker(handleAll, { halfOpenAfter: 10_000, breaker: new ConsecutiveBreaker(5) }))` (README example)";

export function create() {
  const retryPolicy = retry(handleAll, { maxAttempts: 3, backoff: new ExponentialBackoff() });
  const breakerPolicy = circuitBreaker(handleAll, { halfOpenAfter: 10 * 1000, breaker: new ConsecutiveBreaker(5) });
  const policy = wrap(retryPolicy, breakerPolicy);
  return {
    get(url, signal) {
      return policy.execute(async ({ signal: attemptSignal }) => {
        const response = await fetch(url, { signal: attemptSignal });
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return new Uint8Array(await response.arrayBuffer());
      }, signal);
    },
  };
}
