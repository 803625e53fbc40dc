// Config of createTileHandler: validated once, up front. The proxy's own fields are checked
// here; every other field is a TileClient setting and is handed to `new TileClient`, which
// rejects unknown keys and bad values itself. Errors are TileErrors of kind "invalid-options"
// whose message names the field, like the core's.
import { TileError } from "../workerd.js";

export const DEFAULTS = Object.freeze({
  route: "/tiles/{z}/{x}/{y}.png",
  maxZoom: 22,
  cacheTtlS: 86400,
  cacheTtlByStatus: Object.freeze({ 404: 60 }),
  staleIfErrorS: 604800,
  maxSubrequests: 40,
  cors: "*",
});

export const GATE_DEFAULTS = Object.freeze({
  binding: "UPSTREAM_GATE",
  name: undefined,
  failureThreshold: 5,
  openMs: 2000,
  maxOpenMs: 30000,
  ratePerSecond: null,
  burst: undefined,
  timeoutMs: 1000,
});

const PROXY_KEYS = ["upstream", "route", "maxZoom", "cacheTtlS", "cacheTtlByStatus", "staleIfErrorS", "maxSubrequests", "cors", "gate", "redirects"];
const MAX_ZOOM_LIMIT = 30; // 2^30 columns: far past any real tile pyramid, still exact in a double
const MAX_TTL_S = 365 * 86400;

export function invalid(field, why) {
  return new TileError(`invalid \`${field}\`: ${why}`, { kind: "invalid-options", attempts: 0, elapsedMs: 0, url: "" });
}

const isPlainObject = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && [Object.prototype, null].includes(Object.getPrototypeOf(v));
const show = (v) => (typeof v === "string" ? JSON.stringify(v) : typeof v === "object" ? (Array.isArray(v) ? "an array" : "an object") : String(v));

function seconds(field, v, dflt) {
  if (v === undefined || v === null) return dflt;
  if (typeof v !== "number" || !Number.isFinite(v) || v < 0 || v > MAX_TTL_S) {
    throw invalid(field, `must be a number of seconds, 0 … ${MAX_TTL_S} (got ${show(v)})`);
  }
  return v;
}

function integer(field, v, dflt, min, max) {
  if (v === undefined || v === null) return dflt;
  if (!Number.isInteger(v) || v < min || v > max) throw invalid(field, `must be an integer, ${min} … ${max} (got ${show(v)})`);
  return v;
}

/** Statuses that may carry a TTL: 2xx except 206, and the two that say "no tile here". */
function cacheableStatus(code) {
  return (code >= 200 && code <= 299 && code !== 206) || code === 404 || code === 410;
}

function ttlByStatus(v) {
  if (v === undefined || v === null) return { ...DEFAULTS.cacheTtlByStatus };
  if (!isPlainObject(v)) throw invalid("cacheTtlByStatus", `must be an object like {"404": 60} (got ${show(v)})`);
  const out = { ...DEFAULTS.cacheTtlByStatus };
  for (const [k, ttl] of Object.entries(v)) {
    const code = Number(k);
    if (!/^\d{3}$/.test(k) || !cacheableStatus(code)) {
      throw invalid(`cacheTtlByStatus["${k}"]`, "only 2xx (not 206), 404 and 410 can be cached; errors and 5xx never are");
    }
    out[code] = seconds(`cacheTtlByStatus["${k}"]`, ttl, undefined);
  }
  return out;
}

/** Whether `o` is an origin as a URL spells it ("https://maps.example.com"). */
function isOrigin(o) {
  try {
    return typeof o === "string" && new URL(o).origin === o;
  } catch {
    return false;
  }
}

function redirects(v) {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw invalid("redirects", `must be an array of origins an upstream may redirect to (got ${show(v)})`);
  for (const [i, o] of v.entries()) {
    if (!isOrigin(o)) throw invalid(`redirects[${i}]`, `must be an origin like "https://cdn.example.com" (got ${show(o)})`);
  }
  return v;
}

function cors(v) {
  if (v === undefined || v === null) return { origins: DEFAULTS.cors };
  if (v === false) return null;
  const list = typeof v === "string" ? [v] : Array.isArray(v) ? v : null;
  if (!list || list.length === 0) throw invalid("cors", `must be false, "*", an origin or an array of origins (got ${show(v)})`);
  if (list.length === 1 && list[0] === "*") return { origins: "*" };
  for (const [i, o] of list.entries()) {
    if (!isOrigin(o)) throw invalid(Array.isArray(v) ? `cors[${i}]` : "cors", `must be "*" or an origin like "https://maps.example.com" (got ${show(o)})`);
  }
  return { origins: new Set(list) };
}

function gate(v) {
  if (v === false) return null;
  if (v === undefined || v === null) return { ...GATE_DEFAULTS };
  if (!isPlainObject(v)) throw invalid("gate", `must be false or an object (got ${show(v)})`);
  for (const k of Object.keys(v)) if (!(k in GATE_DEFAULTS)) throw invalid(`gate.${k}`, "unknown option");
  const g = { ...GATE_DEFAULTS };
  for (const k of ["binding", "name"]) {
    if (v[k] !== undefined && (typeof v[k] !== "string" || v[k] === "")) throw invalid(`gate.${k}`, `must be a non-empty string (got ${show(v[k])})`);
    if (v[k] !== undefined) g[k] = v[k];
  }
  g.failureThreshold = integer("gate.failureThreshold", v.failureThreshold, g.failureThreshold, 1, 1000);
  g.openMs = integer("gate.openMs", v.openMs, g.openMs, 0, 3_600_000);
  g.maxOpenMs = integer("gate.maxOpenMs", v.maxOpenMs, Math.max(g.maxOpenMs, g.openMs), g.openMs, 3_600_000);
  g.timeoutMs = integer("gate.timeoutMs", v.timeoutMs, g.timeoutMs, 1, 60_000);
  if (v.ratePerSecond !== undefined && v.ratePerSecond !== null) {
    if (typeof v.ratePerSecond !== "number" || !Number.isFinite(v.ratePerSecond) || v.ratePerSecond <= 0) {
      throw invalid("gate.ratePerSecond", `must be a number > 0, or null for no limit (got ${show(v.ratePerSecond)})`);
    }
    g.ratePerSecond = v.ratePerSecond;
  }
  g.burst = integer("gate.burst", v.burst, Math.max(1, Math.ceil(g.ratePerSecond ?? 1)), 1, 1_000_000);
  return g;
}

/**
 * @returns {{upstream: string[], route: string, maxZoom: number, cacheTtlS: number,
 *   cacheTtlByStatus: Record<number, number>, staleIfErrorS: number, maxSubrequests: number,
 *   cors: null | {origins: "*" | Set<string>}, gate: null | object, redirects: string[], client: object}}
 *   `client` is everything else: the TileClient config.
 */
export function resolveConfig(config) {
  if (!isPlainObject(config)) throw invalid("config", `must be an object with at least \`upstream\` (got ${show(config)})`);
  // The proxy's cache is the Cache API, shared by the isolate's requests and held to its own
  // TTLs: a second, in-memory copy per isolate would only answer past them.
  const client = { memoryCacheBytes: 0 };
  for (const [k, v] of Object.entries(config)) {
    if (PROXY_KEYS.includes(k)) continue;
    const near = PROXY_KEYS.find((p) => p.toLowerCase() === k.toLowerCase());
    if (near) throw invalid(k, `unknown option (did you mean \`${near}\`?)`);
    client[k] = v;
  }
  const up = config.upstream;
  const upstream = typeof up === "string" ? [up] : up;
  if (!Array.isArray(upstream) || upstream.length === 0 || upstream.some((u) => typeof u !== "string" || u === "")) {
    throw invalid("upstream", `must be a URL template string or a non-empty array of them (got ${up === undefined ? "nothing" : show(up)})`);
  }
  const route = config.route ?? DEFAULTS.route;
  if (typeof route !== "string") throw invalid("route", `must be a string like "/tiles/{z}/{x}/{y}.png" (got ${show(route)})`);
  return {
    upstream,
    route,
    maxZoom: integer("maxZoom", config.maxZoom, DEFAULTS.maxZoom, 0, MAX_ZOOM_LIMIT),
    cacheTtlS: seconds("cacheTtlS", config.cacheTtlS, DEFAULTS.cacheTtlS),
    cacheTtlByStatus: ttlByStatus(config.cacheTtlByStatus),
    staleIfErrorS: seconds("staleIfErrorS", config.staleIfErrorS, DEFAULTS.staleIfErrorS),
    // 5 = one upstream attempt plus the 4 other subrequests a request may make (cache match/put,
    // gate admit/report). Workers allow 50 (Free) or 1000 (Paid) per request.
    maxSubrequests: integer("maxSubrequests", config.maxSubrequests, DEFAULTS.maxSubrequests, 5, 1000),
    cors: cors(config.cors),
    gate: gate(config.gate),
    redirects: redirects(config.redirects),
    client,
  };
}
