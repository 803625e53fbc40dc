// The Cache API side of the proxy: keys without secrets, and entries that remember when they were
// stored so that freshness (cacheTtlS) and the stale-if-error window are decided here, not by the
// platform. An entry is kept by the cache for its TTL plus staleIfErrorS (2xx only), served as
// fresh while younger than its TTL, and only as a fallback after that.

// Which query parameters carry secrets is the core's rule (src/redact.rs), asked here, never
// restated: the module instance pkg/workerd.js initialised.
import { isSecretName } from "../gen/tilefetch_edge.js";

/** The cache key: the upstream URL with secret query parameters removed (and no user-info). */
export function cacheKeyUrl(upstreamUrl) {
  const u = new URL(upstreamUrl);
  u.username = "";
  u.password = "";
  u.hash = "";
  for (const name of [...new Set(u.searchParams.keys())]) {
    if (isSecretName(name)) u.searchParams.delete(name);
  }
  return u.href;
}

/** The platform cache, or null where there is none (or it is not allowed in this context). */
export function defaultCache() {
  try {
    return globalThis.caches?.default ?? null;
  } catch {
    return null;
  }
}

const STORED_AT = "x-tilefetch-stored-at";

/** Reads an entry: {status, data, contentType, storedAt} or null. Errors count as a miss. */
export async function readEntry(cache, key) {
  try {
    const res = await cache.match(new Request(key));
    if (!res) return null;
    const storedAt = Number(res.headers.get(STORED_AT));
    const data = new Uint8Array(await res.arrayBuffer());
    if (!Number.isFinite(storedAt)) return null; // not ours
    return { status: res.status, data, contentType: res.headers.get("content-type"), storedAt };
  } catch {
    return null;
  }
}

/** Stores an entry for `keepS` seconds (the platform may evict it sooner). Never throws. */
export async function writeEntry(cache, key, { status, data, contentType }, keepS, now) {
  if (!(keepS >= 1)) return false;
  const headers = new Headers({ "cache-control": `public, max-age=${Math.ceil(keepS)}`, [STORED_AT]: String(now) });
  if (contentType) headers.set("content-type", contentType);
  const body = status === 204 || status === 304 || data.length === 0 ? null : data;
  try {
    await cache.put(new Request(key), new Response(body, { status, headers }));
    return true;
  } catch {
    return false;
  }
}
