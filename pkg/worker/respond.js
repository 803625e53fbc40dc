// What the proxy's responses look like: CORS, Server-Timing and plain-text errors.

/** Headers a browser may read cross-origin (none of these is CORS-safelisted). */
const EXPOSED = "Retry-After, Server-Timing, Age, Warning, x-tilefetch-attempts, x-tilefetch-cache, x-tilefetch-stale, x-tilefetch-coalesced";

/** The CORS headers for this request's Origin under `cors` ({origins: "*" | Set}), or {} (none). */
export function corsHeaders(cors, origin) {
  if (!cors) return {};
  if (cors.origins === "*") {
    return { "access-control-allow-origin": "*", "access-control-expose-headers": EXPOSED, "timing-allow-origin": "*" };
  }
  const vary = { vary: "Origin" };
  if (!origin || !cors.origins.has(origin)) return vary;
  return { ...vary, "access-control-allow-origin": origin, "access-control-expose-headers": EXPOSED, "timing-allow-origin": origin };
}

/** The answer to an OPTIONS request. */
export function preflight(cors, request) {
  const headers = new Headers(corsHeaders(cors, request.headers.get("origin")));
  headers.set("allow", "GET, HEAD, OPTIONS");
  if (headers.has("access-control-allow-origin")) {
    headers.set("access-control-allow-methods", "GET, HEAD, OPTIONS");
    const asked = request.headers.get("access-control-request-headers");
    if (asked && /^[\w-]+(\s*,\s*[\w-]+)*$/.test(asked)) headers.set("access-control-allow-headers", asked);
    headers.set("access-control-max-age", "86400");
  }
  return new Response(null, { status: 204, headers });
}

/** `Server-Timing` from [[name, ms, desc?], …]. */
export function serverTiming(entries) {
  return entries
    .map(([name, ms, desc]) => `${name};dur=${Math.max(0, ms).toFixed(1)}${desc ? `;desc="${String(desc).replace(/["\\]/g, "")}"` : ""}`)
    .join(", ");
}

/** A short plain-text response that no cache keeps. */
export function plain(status, message, extra = {}) {
  return { status, body: `${message}\n`, headers: { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store", ...extra } };
}

/** Builds the Response; HEAD gets the headers only. */
export function finish(request, { status, body, headers }, common) {
  const h = new Headers(headers);
  for (const [k, v] of Object.entries(common)) if (v !== undefined && v !== null) h.set(k, String(v));
  const noBody = request.method === "HEAD" || status === 204 || status === 304;
  return new Response(noBody ? null : body, { status, headers: h });
}
