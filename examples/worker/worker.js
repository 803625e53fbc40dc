// An edge tile proxy: one place that retries, caches and protects a slow or rate-limited tile
// server for every map user. `npm install`, then `npm run dev` or `npm run deploy` from this
// directory (README.md: Node >= 22 for wrangler; the upstream is `vars.UPSTREAM` in wrangler.toml,
// the API key the secret TILE_API_KEY, or .dev.vars locally). Maps then load
// https://<your worker>/tiles/{z}/{x}/{y}.png.
import { createTileHandler, UpstreamGate } from "tilefetch/worker";

// The Durable Object class, bound as UPSTREAM_GATE in wrangler.toml: every isolate of this Worker
// shares one breaker, pause and rate limit for the upstream. Remove the binding to run without.
export { UpstreamGate };

let handler = null;

/** What is missing from `env`, said so that whoever deploys knows what to do; null when nothing. */
function missingSetting(env) {
  if (!env.UPSTREAM) return "UPSTREAM is not set: the upstream URL template goes in wrangler.toml's [vars]";
  if (!env.TILE_API_KEY) return "TILE_API_KEY is not set: npx wrangler secret put TILE_API_KEY (for wrangler dev: .dev.vars, see .dev.vars.example)";
  return null;
}

export default {
  async fetch(request, env, ctx) {
    const missing = missingSetting(env);
    if (missing) {
      console.error(`tile-proxy: ${missing}`);
      return new Response(`tile proxy misconfigured: ${missing}\n`, { status: 500, headers: { "content-type": "text/plain; charset=utf-8" } });
    }
    // Built on the first request, because the settings come from `env`. The key reaches the
    // upstream but never a cache key, a log line or an answer.
    handler ??= createTileHandler({
      upstream: `${env.UPSTREAM}${env.UPSTREAM.includes("?") ? "&" : "?"}key=${encodeURIComponent(env.TILE_API_KEY)}`,
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
