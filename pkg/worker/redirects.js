// Which of an upstream's redirects the proxy follows. The proxy fetches for anyone who asks it
// for a tile, so where it fetches must stay where its config points: a redirect is followed only
// to an origin of a configured upstream template or of the `redirects` option, at most
// MAX_REDIRECTS hops, and never to a loopback, private or link-local address (a cloud metadata
// endpoint) unless an upstream is at one itself. Any other redirect is not followed: the 3xx is
// the attempt's answer, which the client does not retry and the proxy does not cache (an
// upstream error, served stale when it can be). The address rule reads the URL's host as
// written (an IP literal, `localhost`): a Worker cannot resolve a name to see where it points.

/** How many redirects one attempt follows. */
export const MAX_REDIRECTS = 3;

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

/**
 * The rule: `upstreamOrigins`, the origins of the configured upstream templates; `allowed`, the
 * `redirects` option's origins.
 */
export function redirectRule(upstreamOrigins, allowed = []) {
  const origins = new Set([...upstreamOrigins, ...allowed]);
  const privateOk = [...upstreamOrigins].some((o) => isPrivateHost(new URL(o).hostname));
  return {
    /** Why a redirect to `url` (a URL) is not followed, or null when it is. */
    refuses(url) {
      if (url.protocol !== "http:" && url.protocol !== "https:") return "not http(s)";
      if (!origins.has(url.origin)) return "another origin than the upstream's and `redirects`";
      if (!privateOk && isPrivateHost(url.hostname)) return "a loopback, private or link-local address";
      return null;
    },
  };
}

/**
 * `send` (a fetch) following the redirects `rule` allows, at most MAX_REDIRECTS: each hop is a
 * GET of the `Location` (a 303, or a GET, keeps its method otherwise). A redirect not followed is
 * answered as it came, its target's origin logged (never its path or query).
 */
export function followingRedirects(send, rule) {
  return async (input, init) => {
    let url = typeof input === "string" ? input : input.url;
    for (let hop = 0; ; hop++) {
      const response = await send(url, { ...init, redirect: "manual" });
      const location = REDIRECTS.has(response.status) ? response.headers.get("location") : null;
      if (location === null) return response;
      let next;
      try {
        next = new URL(location, url);
      } catch {
        return response;
      }
      const why = hop >= MAX_REDIRECTS ? `more than ${MAX_REDIRECTS} redirects` : rule.refuses(next);
      if (why !== null) {
        console.warn(`tilefetch/worker: an upstream redirect to ${next.origin} not followed: ${why}`);
        return response;
      }
      await response.body?.cancel();
      url = next.href;
    }
  };
}

/**
 * Whether `hostname` (a URL's, so an IPv6 address in brackets) is `localhost` or an address in a
 * loopback, private, link-local, carrier-grade NAT or unspecified range.
 */
export function isPrivateHost(hostname) {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host === "localhost" || host.endsWith(".localhost")) return true;
  const v4 = ipv4(host);
  if (v4) {
    const [a, b] = v4;
    return (
      a === 0 ||
      a === 10 ||
      a === 127 ||
      (a === 100 && b >= 64 && b <= 127) ||
      (a === 169 && b === 254) ||
      (a === 172 && b >= 16 && b <= 31) ||
      (a === 192 && b === 168)
    );
  }
  if (host.startsWith("[") && host.endsWith("]")) {
    const v6 = host.slice(1, -1);
    if (v6 === "::" || v6 === "::1") return true;
    const mapped = /^::ffff:(.+)$/.exec(v6);
    if (mapped) return isPrivateHost(mapped[1].includes(".") ? mapped[1] : v4FromHex(mapped[1]));
    const first = Number.parseInt(v6.split(":")[0] || "0", 16);
    return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80; // fc00::/7, fe80::/10
  }
  return false;
}

/** The four numbers of a dotted IPv4 address (as a URL normalises one), or null. */
function ipv4(host) {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (!m) return null;
  const parts = m.slice(1).map(Number);
  return parts.every((n) => n <= 255) ? parts : null;
}

/** "7f00:1" (the hex tail of an IPv4-mapped IPv6 address, as a URL writes it) → "127.0.0.1". */
function v4FromHex(tail) {
  const [hi, lo] = tail.split(":").map((h) => Number.parseInt(h, 16));
  if (!Number.isInteger(hi) || !Number.isInteger(lo)) return "";
  return [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".");
}
