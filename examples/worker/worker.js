// An edge tile proxy: one place that retries, caches and protects a slow or rate-limited tile
// server for every map user. Deploy with `npx wrangler deploy` from this directory after
// `npm install tilefetch` (see wrangler.toml; the API key is a secret: `npx wrangler secret put
// TILE_API_KEY`). Maps then load https://<your worker>/tiles/{z}/{x}/{y}.png.
import { createTileHandler, UpstreamGate } from "tilefetch/worker";

// The Durable Object class, bound as UPSTREAM_GATE in wrangler.toml: every isolate of this Worker
// shares one breaker, pause and rate limit for the upstream. Remove the binding to run without.
export { UpstreamGate };

let handler = null;

export default {
  async fetch(request, env, ctx) {
    // Built on the first request, because the key comes from `env`. It reaches the upstream but
    // never a cache key, a log line or an answer.
    handler ??= createTileHandler({
      upstream: `https://{s}.tiles.example.com/{z}/{x}/{y}.png?key=${env.TILE_API_KEY}`,
      subdomains: ["a", "b", "c"],
      route: "/tiles/{z}/{x}/{y}.png",
      maxZoom: 19,
      cacheTtlS: 86400, // a day fresh at the edge (and in browsers)
      cacheTtlByStatus: { 404: 300 }, // "no tile here" for five minutes
      staleIfErrorS: 604800, // a week of fallback while the upstream is down
      maxSubrequests: 40, // under the Free plan's 50 per request
      cors: "*",
      // TileClient settings for the upstream calls:
      deadlineMs: 8000,
      maxConcurrent: 8,
      queueOrder: "lifo",
      retryBudget: { ratio: 0.2, minPerSecond: 5 },
      gate: { failureThreshold: 5, openMs: 2000, ratePerSecond: 50 },
    });
    return handler(request, env, ctx);
  },
};
