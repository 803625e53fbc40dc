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
 * What the module reads of buildRequest's answer: the request's headers, or the platform's
 * refusal of a field. The answer also holds what `fetchWhole` (transport.js) takes from it:
 * `inputs` (the fetch input per mirror), `init` (what every attempt sends, its signal set per
 * attempt), `custom` (the `fetch` option), `maxBytes` and `ranged` (whether a `range` is asked).
 * @typedef {object} BuiltRequest
 * @property {string} [headers] the headers sent, "name:value;" each, for telling identical calls apart
 * @property {string} [refusedField] the option the platform refused
 * @property {string} [message] the platform's words for the refusal
 */

/** The fetch init fields a call may set, in the order a refusal's message is searched for the
 * field to blame: Chromium's and undici's "'only-if-cached' can be set only with 'same-origin'
 * mode" is about `cache`. */
const INIT_FIELDS = ["cache", "credentials", "mode", "referrerPolicy"];

/**
 * The fetch input per mirror and the init every attempt sends; or, when the platform refuses,
 * the field to blame. `urlLines` has one URL per line; `fields` names the request fields the
 * call set, "name=value" per line, among `accept`, `range` (the Range header's value), `userAgent` and the fetch init's `cache`,
 * `credentials`, `mode` and `referrerPolicy` (the referrer policy "" is a value). Only fields
 * the caller set are sent (workerd rejects some outright), and a `Request` is built per mirror
 * only when such a field is set, so a refusal is the caller's error, reported at once, not a
 * network failure retried until the deadline. `userAgent` is sent unless the caller's headers
 * have a User-Agent; being the same for every call, it is left out of the headers string.
 * `custom` (the `fetch` option, or undefined) and `maxBytes` are kept for `fetchWhole`.
 * @returns {BuiltRequest}
 */
export function buildRequest(urlLines, headers, fields, custom, maxBytes) {
  const urls = urlLines.split("\n");
  const init = {};
  // The fields, read in one pass ("name=value" each; a value may be empty): a call's path, where
  // an object of them and a rest pattern over it cost every call.
  let accept;
  let userAgent;
  let range;
  let initFields = false;
  for (const line of fields.split("\n")) {
    const at = line.indexOf("=");
    if (at <= 0) continue;
    const name = line.slice(0, at);
    const value = line.slice(at + 1);
    if (name === "accept") accept = value;
    else if (name === "userAgent") userAgent = value;
    else if (name === "range") range = value;
    else if (INIT_FIELDS.includes(name)) {
      init[name] = value;
      initFields = true;
    }
  }
  let sent = "";
  if (headers !== undefined || accept !== undefined || range !== undefined) {
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
    // The range is the call's own (two ranges of one URL are two requests): it replaces any in `headers`.
    if (range !== undefined) init.headers.set("range", range);
    for (const [name, value] of init.headers) sent += `${name}:${value};`;
    if (userAgent !== undefined && !init.headers.has("user-agent")) init.headers.set("user-agent", userAgent);
  } else if (userAgent !== undefined) {
    init.headers = { "user-agent": userAgent };
  }
  const ranged = range !== undefined;
  if (!initFields) return { inputs: urls, init, headers: sent, custom, maxBytes, ranged };
  try {
    return { inputs: urls.map((url) => new Request(url, init)), init, headers: sent, custom, maxBytes, ranged };
  } catch (refusal) {
    let message = "";
    try {
      message = String(refusal?.message ?? "");
    } catch {}
    // In INIT_FIELDS' order, whatever the lines' order.
    const blamed = INIT_FIELDS.find((name) => init[name] !== undefined && message.includes(name));
    return { refusedField: blamed ?? "options", message };
  }
}
