// From an incoming request's path to the upstream URL(s). The SSRF rule lives here: only the
// configured upstream templates build upstream URLs, and the request contributes nothing but three
// integers that were checked against the tile pyramid. The request's host, query and headers are
// never read; the path is matched segment by segment and each coordinate must be plain ASCII
// digits, so encoded slashes, `@`, `..`, `//host` or an absolute URL in any position is a 400/404.
import { invalid } from "./config.js";

const ROUTE_PLACEHOLDERS = ["{z}", "{x}", "{y}"];
const UPSTREAM_PLACEHOLDER = /\{(z|x|y|-y|s)\}/g;
const DIGITS = /^\d{1,10}$/; // ASCII only: \d in a non-unicode JS regex is [0-9]

const escapeRe = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** Compiles `route` into a matcher: path → {z, x, y} strings, or null when the path is not a tile path. */
export function compileRoute(route) {
  if (!route.startsWith("/")) throw invalid("route", `must start with "/" (got ${JSON.stringify(route)})`);
  if (/[?#]/.test(route)) throw invalid("route", "matches the path only: no query or fragment");
  const order = [];
  let re = "^";
  let rest = route;
  for (;;) {
    const at = rest.search(/\{[^}]*\}/);
    if (at < 0) break;
    const ph = rest.slice(at).match(/^\{[^}]*\}/)[0];
    if (!ROUTE_PLACEHOLDERS.includes(ph)) throw invalid("route", `unknown placeholder ${ph}: use {z}, {x} and {y}`);
    if (order.includes(ph)) throw invalid("route", `${ph} appears twice`);
    order.push(ph);
    re += `${escapeRe(rest.slice(0, at))}([^/]*)`;
    rest = rest.slice(at + ph.length);
  }
  re += `${escapeRe(rest)}$`;
  for (const ph of ROUTE_PLACEHOLDERS) if (!order.includes(ph)) throw invalid("route", `must contain ${ph}`);
  const regex = new RegExp(re);
  return (pathname) => {
    const m = regex.exec(pathname);
    if (!m) return null;
    const out = {};
    order.forEach((ph, i) => {
      out[ph.slice(1, -1)] = m[i + 1];
    });
    return out;
  };
}

/** Checks the matched strings: integers, z ≤ maxZoom, 0 ≤ x, y < 2^z. Returns {z, x, y} or {error}. */
export function checkTile(parts, maxZoom) {
  for (const k of ["z", "x", "y"]) {
    if (!DIGITS.test(parts[k])) return { error: `${k} must be a non-negative integer` };
  }
  const z = Number(parts.z);
  const x = Number(parts.x);
  const y = Number(parts.y);
  if (z > maxZoom) return { error: `z must be ≤ ${maxZoom}` };
  const n = 2 ** z;
  if (x >= n) return { error: `x must be < 2^z = ${n}` };
  if (y >= n) return { error: `y must be < 2^z = ${n}` };
  return { z, x, y };
}

/** The authority of an absolute URL template ("scheme://authority/..."), or null. */
function authorityOf(template) {
  const m = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(template);
  return m ? m[1] : null;
}

/**
 * Validates the upstream templates and returns {build(z, x, y) → string[], hosts: Set<host>,
 * origins: Set<origin>, keyUrl(z, x, y) → the URL of the first template with {s} as the first
 * subdomain}.
 * Coordinates may only appear after the authority, so the set of hosts is fixed by the config.
 */
export function compileUpstream(templates, subdomains, isList) {
  const subs = Array.isArray(subdomains) && subdomains.length > 0 ? subdomains.map(String) : ["a", "b", "c"];
  const hosts = new Set();
  const origins = new Set();
  templates.forEach((t, i) => {
    const field = isList ? `upstream[${i}]` : "upstream";
    const authority = authorityOf(t);
    if (authority === null) throw invalid(field, `must be an absolute http(s) URL template (got ${JSON.stringify(t)})`);
    for (const ph of t.match(/\{[^}]*\}/g) ?? []) {
      if (!/^\{(z|x|y|-y|s)\}$/.test(ph)) throw invalid(field, `unknown placeholder ${ph}: use {z}, {x}, {y}, {-y} and {s}`);
    }
    if (/\{(z|x|-?y)\}/.test(authority)) throw invalid(field, "{z}, {x} and {y} may not appear in the host: the host is fixed by the config");
    if (!t.includes("{z}") || !t.includes("{x}") || !(t.includes("{y}") || t.includes("{-y}"))) {
      throw invalid(field, "must contain {z}, {x} and {y} (or {-y})");
    }
    if (t.includes("#")) throw invalid(field, "may not contain a fragment (#)");
    for (const s of authority.includes("{s}") ? subs : [null]) {
      let u;
      try {
        u = new URL(expand(t, 0, 0, 0, s));
      } catch {
        throw invalid(field, `is not a valid URL once expanded (got ${JSON.stringify(t)})`);
      }
      if (u.protocol !== "http:" && u.protocol !== "https:") throw invalid(field, `must be http or https (got ${u.protocol})`);
      if (u.username || u.password) throw invalid(field, "may not carry credentials: pass them in `headers` or the query");
      hosts.add(u.host);
      origins.add(u.origin);
    }
  });
  const build = (z, x, y) => templates.map((t) => expand(t, z, x, y, null));
  const keyUrl = (z, x, y) => expand(templates[0], z, x, y, subs[0]);
  return { build, hosts, origins, keyUrl };
}

/** Fills {z} {x} {y} {-y} (and {s} when given; otherwise the client expands it per mirror). */
function expand(template, z, x, y, s) {
  return template.replace(UPSTREAM_PLACEHOLDER, (ph, name) => {
    switch (name) {
      case "z":
        return String(z);
      case "x":
        return String(x);
      case "y":
        return String(y);
      case "-y":
        return String(2 ** z - 1 - y);
      default:
        return s === null ? ph : s;
    }
  });
}

/** Defence in depth: every URL about to be fetched has one of the configured hosts. */
export function assertUpstreamHosts(urls, hosts, subdomains) {
  const subs = Array.isArray(subdomains) && subdomains.length > 0 ? subdomains.map(String) : ["a", "b", "c"];
  for (const u of urls) {
    for (const s of u.includes("{s}") ? subs : [null]) {
      const host = new URL(s === null ? u : u.replaceAll("{s}", s)).host;
      if (!hosts.has(host)) throw new Error(`refusing to fetch from ${host}: not a configured upstream host`);
    }
  }
}
