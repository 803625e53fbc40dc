// The reference for what a call may cost (the "boundary" issue): the wrapper anyone writes around
// fetch for tiles, in plain JS. Its own AbortController that the caller's signal and a 4 s timer
// abort, one attempt, and two header reads (Content-Type and Retry-After, what a tile loader
// looks at). No retries: what it costs, not what it survives, is what it is measured for.
export const label = "plain JS wrapper";
export const anchor = null;
export const config = "own AbortController, caller's signal forwarded, 4 s timer, two header reads; no retries";

const ATTEMPT_TIMEOUT_MS = 4000;

export function create() {
  return {
    async get(url, signal) {
      const controller = new AbortController();
      const forward = () => controller.abort(signal.reason);
      signal.addEventListener("abort", forward, { once: true });
      const timer = setTimeout(() => controller.abort(new DOMException("timed out", "TimeoutError")), ATTEMPT_TIMEOUT_MS);
      try {
        const response = await fetch(url, { signal: controller.signal });
        const type = response.headers.get("content-type");
        const retryAfter = response.headers.get("retry-after");
        if (!response.ok) throw new Error(`HTTP ${response.status}${retryAfter ? `, Retry-After ${retryAfter}` : ""}`);
        const data = new Uint8Array(await response.arrayBuffer());
        if (type !== null && !type.startsWith("image/")) throw new Error(`not an image: ${type}`);
        return data;
      } finally {
        clearTimeout(timer);
        signal.removeEventListener("abort", forward);
      }
    },
  };
}
