// One attempt's JS half: fetch, the whole body, and the few headers classification reads, in one
// call from the wasm module. Each crossing between wasm and JS (and each header name passed
// across as a string) costs every tile, so they are batched here.

/**
 * A response and what classification reads of it (`Fetched` in transport.rs): the headers are
 * the values (undefined when absent), read here so each is one getter, not a `get` call from wasm.
 * @typedef {object} Fetched
 * @property {Response} response
 * @property {Uint8Array} data the whole body
 * @property {number} status
 * @property {string | undefined} contentType
 * @property {string | undefined} contentEncoding
 * @property {string | undefined} contentLength
 * @property {string | undefined} retryAfter
 * @property {string | undefined} age
 * @property {string | undefined} date
 */

/**
 * Fetches mirror `index` of `inputs` (URL strings or Requests) with `custom` (the `fetch` option)
 * or else the platform's `scope.fetch`, past every cache when `bust`,
 * past the platform's HTTP cache when `hedge` (see `pastLocalCache`). Rejects as `fetch` or the
 * body read does.
 * @returns {Promise<Fetched>}
 */
export async function fetchWhole(scope, custom, inputs, index, init, bust, hedge) {
  let input = inputs[Math.min(index, inputs.length - 1)];
  if (bust) input = busted(input, init);
  const sent = hedge ? pastLocalCache(init) : init;
  const response = await (custom ? custom(input, sent) : scope.fetch(input, sent));
  const data = new Uint8Array(await response.arrayBuffer());
  const headers = response.headers;
  const header = (name) => headers.get(name) ?? undefined;
  return {
    response,
    data,
    status: response.status,
    contentType: header("content-type"),
    contentEncoding: header("content-encoding"),
    contentLength: header("content-length"),
    retryAfter: header("retry-after"),
    age: header("age"),
    date: header("date"),
  };
}

/** Aborts a timed-out attempt with the reason `AbortSignal.timeout` gives (a `TimeoutError`). */
export function timeOut(controller) {
  let reason;
  try {
    reason = new DOMException("the attempt timed out", "TimeoutError");
  } catch {
    reason = Object.assign(new Error("the attempt timed out"), { name: "TimeoutError" });
  }
  controller.abort(reason);
}

/** `TypeError: fetch failed` plus the cause's code where Node gives one (`ECONNREFUSED`). */
export function errorText(error) {
  try {
    const code = error?.cause?.code;
    return String(error?.message ?? "fetch failed") + (typeof code === "string" ? ` (${code})` : "");
  } catch {
    return "fetch failed";
  }
}

/**
 * `init` with `cache: "no-store"`: a hedge neither waits for nor fills the HTTP cache. Chromium's
 * cache lets one request per URL at a time write an entry and holds the next behind it until the
 * first one's headers arrive, which for a hung request is never: the hedge of a hung tile went
 * out only when the hung one timed out. Where the field is refused (workerd's fetch implements no
 * `cache` mode), `init` as it is: such a platform has no such cache.
 */
function pastLocalCache(init) {
  const hedged = { ...init, cache: "no-store" };
  try {
    new Request("http://127.0.0.1/", hedged);
    return hedged;
  } catch {
    return init;
  }
}

/** The same request with a query parameter no cache has seen (`_tf=<random>`). */
function busted(input, init) {
  const isRequest = typeof input !== "string";
  const url = isRequest ? input.url : input;
  const hash = url.indexOf("#");
  const base = hash < 0 ? url : url.slice(0, hash);
  const fragment = hash < 0 ? "" : url.slice(hash);
  const next = `${base}${base.includes("?") ? "&" : "?"}_tf=${Math.floor(Math.random() * 1e9)}${fragment}`;
  if (!isRequest) return next;
  try {
    return new Request(next, init);
  } catch {
    return input;
  }
}
