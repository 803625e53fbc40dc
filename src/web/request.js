// Reading a call's URL and building its request init: the platform's URL parser and Request
// constructor, in one call each from the wasm module. Nothing here throws: a refusal comes back
// as a value the Rust side turns into an invalid-options error naming the field.

const ABSOLUTE = /^https?:\/\//i;

/**
 * The absolute href of `text`, resolved against the page's or worker's location when there is
 * one; or why not: 1 not a valid URL, 2 relative with nothing to resolve it against, 3 not
 * http(s), 4 has credentials in it.
 */
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
    return base === undefined && !absolute ? 2 : 1;
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return 3;
  if (url.username || url.password) return 4;
  return url.href;
}

/**
 * The mirrors of a call, resolved: a URL, an array of 1 to 16 URLs, or a template whose `{s}` is
 * expanded over `labelLines` (one subdomain per line, at most 16 used). Returns the hrefs, one
 * per line; or `[why, text]` for the first URL refused: `why` as resolveUrl gives it, or 5 when
 * `url` is neither a string nor an array, 6 when the array is not 1 to 16 strings.
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
    if (!texts || texts.length < 1 || texts.length > 16 || texts.some((text) => typeof text !== "string")) return [6, ""];
  } else {
    return [5, ""];
  }
  const hrefs = [];
  for (const text of texts) {
    const href = resolveUrl(text);
    if (typeof href === "number") return [href, text];
    hrefs.push(href);
  }
  return hrefs.join("\n");
}

/**
 * The fetch input per mirror, the init every attempt sends, and its headers as one string
 * ("name:value;" each, for telling identical calls apart): `[inputs, init, headers]`;
 * or, when the platform refuses, `[field, message]`. Only fields the caller set are sent
 * (workerd rejects some outright), and a `Request` is built per mirror only when such a field
 * is set, so a refusal is the caller's error, reported at once, not a network failure retried
 * until the deadline. Strings cross from wasm in two: `urlLines`, one URL per line, and
 * `fieldLines`, a line each for accept, credentials, mode, cache and referrerPolicy: "" when not
 * set, "=" and the value when set (the referrer policy "" is a value). `userAgent`, when given,
 * is sent unless the caller's headers have a User-Agent; being the same for every call, it is
 * left out of the headers string.
 */
export function buildRequest(urlLines, headers, fieldLines, userAgent) {
  const urls = urlLines.split("\n");
  const [accept, credentials, mode, cache, referrerPolicy] = fieldLines.split("\n").map((line) => (line ? line.slice(1) : undefined));
  const init = {};
  let sent = "";
  if (headers !== undefined || accept !== undefined) {
    try {
      init.headers = new Headers(headers);
    } catch {
      return ["headers", "is not a valid headers init"];
    }
    try {
      if (accept !== undefined && !init.headers.has("accept")) init.headers.set("accept", accept);
    } catch {
      return ["accept", "is not a valid header value"];
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
  if (!refusable) return [urls, init, sent];
  try {
    return [urls.map((url) => new Request(url, init)), init, sent];
  } catch (refusal) {
    let message = "";
    try {
      message = String(refusal?.message ?? "");
    } catch {}
    const set = Object.keys(fields).filter((name) => fields[name] !== undefined);
    const field = set.find((name) => message.includes(name)) ?? "options";
    return [field, message];
  }
}
