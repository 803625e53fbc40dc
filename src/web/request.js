// Reading a call's URL and building its request init: the platform's URL parser and Request
// constructor, in one call each from the wasm module. Nothing here throws: a refusal comes back
// as a value the Rust side turns into an invalid-options error naming the field.

const ABSOLUTE = /^https?:\/\//i;

/** Why a call's URL was refused: `UrlRefusal` in js_options.rs. */
export const URL_REFUSALS = Object.freeze({
  invalid: 1,
  // Relative, with no page or worker location to resolve it against.
  relative: 2,
  notHttp: 3,
  credentials: 4,
  notStringOrArray: 5,
  badList: 6,
});

/**
 * The refusal of a call's URL (`UrlRefused` in js_options.rs).
 * @typedef {object} UrlRefused
 * @property {number} refusal one of URL_REFUSALS
 * @property {string} text the URL refused ("" when the refusal is about the whole value)
 */

/** The absolute href of `text`, resolved against the page's or worker's location when there is one; or why not. */
function resolveUrl(text) {
  const absolute = ABSOLUTE.test(text);
  let base;
  try {
    const href = absolute ? undefined : globalThis.location?.href;
    base = typeof href === "string" ? href : undefined;
  } catch {}
  let url;
  try {
    url = new URL(text, base);
  } catch {
    return base === undefined && !absolute ? URL_REFUSALS.relative : URL_REFUSALS.invalid;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return URL_REFUSALS.notHttp;
  if (url.username || url.password) return URL_REFUSALS.credentials;
  return url.href;
}

/**
 * The mirrors of a call, resolved: a URL, an array of 1 to 16 URLs, or a template whose `{s}` is
 * expanded over `labelLines` (one subdomain per line, at most 16 used). Returns the hrefs, one
 * per line; or a UrlRefused for the first URL refused.
 * @returns {string | UrlRefused}
 */
export function resolveUrls(url, labelLines) {
  let texts;
  if (typeof url === "string") {
    texts = url.includes("{s}")
      ? labelLines
          .split("\n")
          .slice(0, 16)
          .map((label) => url.replaceAll("{s}", label))
      : [url];
  } else if (Array.isArray(url)) {
    try {
      texts = Array.from(url);
    } catch {}
    if (!texts || texts.length < 1 || texts.length > 16 || texts.some((text) => typeof text !== "string")) {
      return { refusal: URL_REFUSALS.badList, text: "" };
    }
  } else {
    return { refusal: URL_REFUSALS.notStringOrArray, text: "" };
  }
  const hrefs = [];
  for (const text of texts) {
    const href = resolveUrl(text);
    if (typeof href === "number") return { refusal: href, text };
    hrefs.push(href);
  }
  return hrefs.join("\n");
}

/**
 * What buildRequest gives: the request, or the platform's refusal of a field.
 * @typedef {object} BuiltRequest
 * @property {Array<string | Request>} [inputs] the fetch input per mirror
 * @property {RequestInit} [init] what every attempt sends (its signal set per attempt)
 * @property {string} [headers] the headers sent, "name:value;" each, for telling identical calls apart
 * @property {string} [refusedField] the option the platform refused
 * @property {string} [message] the platform's words for the refusal
 */

/**
 * The fetch input per mirror and the init every attempt sends; or, when the platform refuses,
 * the field to blame. Only fields the caller set are sent (workerd rejects some outright), and a
 * `Request` is built per mirror only when such a field is set, so a refusal is the caller's error,
 * reported at once, not a network failure retried until the deadline. `urlLines` has one URL per
 * line; an option not set is undefined (the referrer policy "" is a value). `userAgent`, when
 * given, is sent unless the caller's headers have a User-Agent; being the same for every call, it
 * is left out of the headers string.
 * @returns {BuiltRequest}
 */
export function buildRequest(urlLines, headers, accept, credentials, mode, cache, referrerPolicy, userAgent) {
  const urls = urlLines.split("\n");
  const init = {};
  let sent = "";
  if (headers !== undefined || accept !== undefined) {
    try {
      init.headers = new Headers(headers);
    } catch {
      return { refusedField: "headers", message: "is not a valid headers init" };
    }
    try {
      if (accept !== undefined && !init.headers.has("accept")) init.headers.set("accept", accept);
    } catch {
      return { refusedField: "accept", message: "is not a valid header value" };
    }
    for (const [name, value] of init.headers) sent += `${name}:${value};`;
    if (userAgent !== undefined && !init.headers.has("user-agent")) init.headers.set("user-agent", userAgent);
  } else if (userAgent !== undefined) {
    init.headers = { "user-agent": userAgent };
  }
  // In the order a refusal's message is searched for the field to blame: Chromium's and
  // undici's "'only-if-cached' can be set only with 'same-origin' mode" is about `cache`.
  const fields = { cache, credentials, mode, referrerPolicy };
  let refusable = false;
  for (const name in fields) {
    if (fields[name] !== undefined) {
      init[name] = fields[name];
      refusable = true;
    }
  }
  if (!refusable) return { inputs: urls, init, headers: sent };
  try {
    return { inputs: urls.map((url) => new Request(url, init)), init, headers: sent };
  } catch (refusal) {
    let message = "";
    try {
      message = String(refusal?.message ?? "");
    } catch {}
    const set = Object.keys(fields).filter((name) => fields[name] !== undefined);
    return { refusedField: set.find((name) => message.includes(name)) ?? "options", message };
  }
}
