// ky as its README's `retry` section recommends: the default policy (limit 2; statusCodes 408
// 413 429 500 502 503 504; Retry-After honoured on 413/429/503 up to `maxRetryAfter`, which
// defaults to `timeout`, 10 s; delay 0.3 s · 2^(n−1)) plus `jitter: true`, which the README
// suggests "to prevent thundering herd problems". Non-2xx throws HTTPError
// (`throwHttpErrors` default); the body is read with `.arrayBuffer()` as the README shows.
import ky from "ky";

export const label = "ky";
export const anchor = "ky";
export const config = "`ky.create({ retry: { limit: 2, jitter: true } })` (README defaults + jitter), `timeout` 10 s default";

export function create() {
  const api = ky.create({ retry: { limit: 2, jitter: true } });
  return {
    async get(url, signal) {
      return new Uint8Array(await api.get(url, { signal }).arrayBuffer());
    },
  };
}
