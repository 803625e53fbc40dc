// One attempt's JS half: fetch, the whole body, and the few headers classification reads, in one
// call from the wasm module. Each crossing between wasm and JS (and each header name passed
// across as a string) costs every tile, so they are batched here.

/**
 * A response and what classification reads of it (`Fetched` in transport.rs).
 * @typedef {object} Fetched
 * @property {Response} response
 * @property {Uint8Array} data the whole body
 * @property {number} status
 * @property {string} fields the fields the core reads that the response has, one `name: value`
 *   line each (`fieldLines`)
 * @property {boolean} early whether the request was sent before the module was ready
 *   (`sendEarly`): when its answer arrived is not known
 */

/** The URL of a fetch input: a URL string or a `Request`. */
const urlOf = (input) => (typeof input === "string" ? input : input.url);

/**
 * Requests sent before the module was ready, by URL (`sendEarly`): `{ fetcher, request, response,
 * controller, release }`, the `fetch` that sent it, what it sent (`buildRequest`'s), its answer's
 * promise, what aborts it, and what lets the caller's signal go once an attempt has it.
 */
const earlyRequests = new Map();

/**
 * Sends a call's first request now, before the module is ready (the browser entry loads it in
 * the background: src/web/lazy.js), as the core's first attempt will send it: `request`, what
 * `buildRequest` built for the call, through its `custom` (the call's `fetch` option) or the
 * platform's `fetch`. That attempt, once the module is ready, takes its answer (`fetchWhole`)
 * instead of asking again: a map's first view leaves when the map asks, as its own loader's
 * would. Until an attempt has it, `signal` (the caller's, with its deadline) aborts it. Returns
 * what to call once the call has settled: a request no attempt took by then is aborted. Null when
 * a request for the URL is out already (identical calls join one flight in the core).
 */
export function sendEarly(request, signal) {
  const [input] = request.inputs;
  const href = urlOf(input);
  if (earlyRequests.has(href)) return null;
  const fetcher = request.custom ?? globalThis.fetch;
  const controller = new AbortController();
  let entry;
  const forget = () => {
    if (earlyRequests.get(href) === entry) earlyRequests.delete(href);
  };
  const stop = () => {
    forget();
    controller.abort(signal.reason);
  };
  signal?.addEventListener("abort", stop, { once: true });
  const release = () => signal?.removeEventListener("abort", stop);
  let response;
  try {
    response = Promise.resolve(fetcher(input, { ...request.init, signal: controller.signal }));
  } catch (error) {
    response = Promise.reject(error);
  }
  response.catch(() => {}); // an answer no attempt takes is nobody's error
  entry = { fetcher, request, response, controller, release };
  earlyRequests.set(href, entry);
  return () => {
    release();
    if (earlyRequests.get(href) !== entry) return; // taken, or aborted already
    earlyRequests.delete(href);
    controller.abort(new DOMException("no attempt took the early request", "AbortError"));
  };
}

/**
 * The early request an attempt may take in place of its own (`sendEarly`): one still out for
 * the URL of `input` that sent what this attempt would (`sent`, under the call's `request`),
 * through the same `fetch`. It may be another call's that asks the same (a TileClient's): the
 * answer is the same. From then on `signal`, the attempt's, aborts it, not the caller's.
 */
function takeEarly(input, request, sent, signal) {
  const href = urlOf(input);
  const entry = earlyRequests.get(href);
  if (!entry || entry.fetcher !== (request.custom ?? globalThis.fetch) || entry.request.headers !== request.headers) return null;
  const named = (init) => Object.keys(init).filter((key) => key !== "signal" && key !== "headers");
  const before = entry.request.init;
  const fields = named(sent);
  if (fields.length !== named(before).length || fields.some((key) => sent[key] !== before[key])) return null;
  earlyRequests.delete(href);
  entry.release();
  if (signal.aborted) entry.controller.abort(signal.reason);
  else signal.addEventListener("abort", () => entry.controller.abort(signal.reason), { once: true });
  return entry.response;
}

/**
 * Fetches mirror `index` of a call's request (what `buildRequest` in request.js built: its
 * `inputs`, URL strings or Requests, and `init`) under `signal`, with the call's `custom` (the
 * `fetch` option) or else the platform's `fetch`, past every cache when `bust`, past the
 * platform's HTTP cache when `hedge` (see `pastLocalCache`), its body bounded by the request's
 * `maxBytes` (see `readBounded`); or takes the call's early request (`sendEarly`). Rejects as
 * `fetch` or the body read does.
 * @returns {Promise<Fetched>}
 */
export async function fetchWhole(request, index, signal, bust, hedge) {
  const { inputs, custom, maxBytes, ranged } = request;
  // A copy per attempt: a `fetch` option may read its init after an await (the edge proxy's
  // gate does), by when a hedge beside it has started with a signal of its own.
  const init = { ...request.init, signal };
  // Whatever `globalThis` is here: Window, WorkerGlobalScope, Node's global or workerd's.
  const scope = globalThis;
  let input = inputs[Math.min(index, inputs.length - 1)];
  if (bust) input = busted(input, init);
  const sent = hedge ? pastLocalCache(init) : init;
  let response;
  let earlyResponse = null;
  try {
    earlyResponse = earlyRequests.size > 0 ? takeEarly(input, request, sent, signal) : null;
    response = await (earlyResponse ?? (custom ? custom(input, sent) : scope.fetch(input, sent)));
  } catch (error) {
    // fetch's network error is a TypeError, whoever called it (the `fetch` option may wrap it).
    if (error instanceof TypeError && (await answersWithoutCors(scope, input, sent, ranged))) throw new CorsRefusal(error);
    throw error;
  }
  if (response.type === "cors") answeredCors(response.url);
  const headers = response.headers;
  const data = await readBounded(response, headers.get("content-length") ?? undefined, maxBytes);
  return { response, data, status: response.status, fields: fieldLines(headers, ranged), early: earlyResponse !== null };
}

// The fields the core reads (`FIELDS` in src/response/fields.rs), and those a server states its
// rate limit in (`FIELDS` in src/response/rate_limit.rs); tests/wire.rs checks that the lists
// agree. None of the rate-limit fields is CORS-safelisted: a page reads them only from a server
// that exposes them (Access-Control-Expose-Headers).
const READ_FIELDS = ["content-type", "content-encoding", "content-length", "content-range", "retry-after", "age", "date", "cache-control", "expires"];
const RATE_LIMIT_FIELDS = ["ratelimit-policy", "ratelimit", "x-ratelimit-remaining", "x-ratelimit-reset", "ratelimit-reset"];
const ALL_FIELDS = [...READ_FIELDS, ...RATE_LIMIT_FIELDS];

/**
 * The fields of READ_FIELDS and RATE_LIMIT_FIELDS that `headers` has, as `name: value` lines, in
 * one text (one crossing, where a getter per field was one each); `content-range` only for a
 * range (`ranged`).
 */
function fieldLines(headers, ranged) {
  let lines = "";
  for (const name of ALL_FIELDS) {
    const value = name === "content-range" && !ranged ? null : headers.get(name);
    if (value !== null) lines += `${name}: ${value}\n`;
  }
  return lines;
}

/**
 * A cross-origin fetch that failed because the server sent no CORS headers: the server answered,
 * the browser withheld the response. `cause` is the fetch's own error.
 */
class CorsRefusal extends Error {
  constructor(cause) {
    super("the server answered without CORS headers", { cause });
    this.name = "CorsRefusal";
  }
}

/** Whether an attempt's error is a {@link CorsRefusal}. */
export function isCorsRefusal(error) {
  return error instanceof CorsRefusal;
}

// Origins found to answer without CORS headers (origin -> when), and the checks under way
// (origin -> Promise<boolean>): a view's tiles that fail at once share one check, and an origin
// found so is checked again only after CORS_RECHECK_MS (its server may have been fixed, or be
// down now).
const refusedAt = new Map();
const checking = new Map();
const CORS_RECHECK_MS = 60_000;
// Origins that answered a CORS request (any status) lately (origin -> when): a server sends its
// CORS headers on every answer, so a request to one that fails is a network failure (a reset,
// a connection lost), retried as one, even when a no-cors request then reaches it.
const answeredAt = new Map();

/** Notes that the origin of `url` (a response's: serialised, so read off the string) answered a CORS request. */
function answeredCors(url) {
  const end = url.indexOf("/", url.indexOf("://") + 3);
  const origin = end === -1 ? url : url.slice(0, end);
  answeredAt.set(origin, Date.now());
  refusedAt.delete(origin);
}

/** Whether `origin` answered a CORS request within CORS_RECHECK_MS. */
const answersCors = (origin) => Date.now() - (answeredAt.get(origin) ?? Number.NEGATIVE_INFINITY) < CORS_RECHECK_MS;

/**
 * After `fetch` rejected: whether the reason is a server that answers without CORS headers.
 * Only where the platform enforces CORS (a page or a worker: a `location` of another origin than
 * the request's) and the request asked for CORS, of an origin that has not answered a CORS request
 * lately. One `no-cors` request tells: an opaque response means the server answered; a network
 * error, that it did not. A `ranged` request (a byte range) is first sent once more as it was.
 */
async function answersWithoutCors(scope, input, init, ranged) {
  if (init.mode !== undefined && init.mode !== "cors") return false;
  if (init.signal?.aborted) return false;
  let origin;
  try {
    const here = scope.location?.origin;
    if (typeof here !== "string") return false;
    const url = new URL(urlOf(input), scope.location.href);
    if (url.origin === here || (url.protocol !== "http:" && url.protocol !== "https:")) return false;
    origin = url.origin;
  } catch {
    return false;
  }
  if (answersCors(origin)) return false;
  const seen = refusedAt.get(origin);
  if (seen !== undefined && Date.now() - seen < CORS_RECHECK_MS) return true;
  let check = checking.get(origin);
  if (!check) {
    const url = urlOf(input);
    const noCors = () =>
      scope.fetch(url, { mode: "no-cors", credentials: init.credentials, referrerPolicy: init.referrerPolicy, cache: "no-store" }).then(
        (response) => response.type === "opaque",
        () => false,
      );
    // A byte range is read through CORS only (no image stands in for it, and a refusal ends the
    // read): the request once more tells a connection reset from a server without CORS headers.
    const checked = ranged
      ? scope.fetch(input, { ...init, signal: undefined, cache: "no-store" }).then((response) => {
          answeredCors(response.url);
          response.body?.cancel().catch(() => {});
          return false;
        }, noCors)
      : noCors();
    check = checked.then((refused) => {
      checking.delete(origin);
      if (refused) refusedAt.set(origin, Date.now());
      else refusedAt.delete(origin);
      return refused;
    });
    checking.set(origin, check);
  }
  // One of the origin's CORS requests answered while the check was out: not a refusal.
  return (await check) && !answersCors(origin);
}

/**
 * A body over `maxBytes`: its declared `Content-Length`, or the bytes read when the bound was
 * passed, and the response's status (`tooLargeOf`; `TooLarge` in transport.rs).
 * @typedef {object} TooLarge
 * @property {number} bytes
 * @property {boolean} declared
 * @property {number} status
 */
class BodyTooLarge extends Error {
  constructor(bytes, declared, status) {
    super("the body is larger than maxBytes");
    this.name = "BodyTooLarge";
    this.bytes = bytes;
    this.declared = declared;
    this.status = status;
  }
}

/** The {@link TooLarge} facts of an attempt's error, when a body over `maxBytes` is what it is. */
export function tooLargeOf(error) {
  return error instanceof BodyTooLarge ? error : undefined;
}

/**
 * The whole body, held to `maxBytes`. A declared length over it is refused unread; any other
 * body is read chunk by chunk and cut as soon as it passes the bound (a body without a
 * `Content-Length`, or with a `Content-Encoding`, which the platform decodes, has no length
 * before it is read). Either way the read is cancelled, which ends the request, and a
 * {@link BodyTooLarge} is thrown. A body that is no web stream (a `fetch` option's response
 * whose body is another kind of stream, or none) is read whole, then held to the bound.
 *
 * Through the body's reader even where the length is known: in Chromium, `arrayBuffer()` (and
 * `blob()`, `bytes()`) of a body already received resolves only after every task queued on the
 * thread before it, where a reader's `read()` resolves at once; a map's main thread has tiles
 * decoding and layout queued (ARCHITECTURE.md's ledger has the measurement).
 */
async function readBounded(response, contentLength, maxBytes) {
  const declared = contentLength === undefined ? Number.NaN : Number(contentLength);
  const body = response.body;
  const stream = typeof body?.getReader === "function";
  if (declared > maxBytes) {
    if (stream) await body.cancel().catch(() => {});
    throw new BodyTooLarge(declared, true, response.status);
  }
  if (!stream) {
    // No web stream to read as it comes: read whole, then held to the bound.
    const data = new Uint8Array(await response.arrayBuffer());
    if (data.byteLength > maxBytes) throw new BodyTooLarge(data.byteLength, false, response.status);
    return data;
  }
  const reader = body.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    // What `arrayBuffer()` rejects too: a script's stream that enqueued something else.
    if (!(value instanceof Uint8Array)) throw new TypeError("a body chunk that is not a Uint8Array");
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel().catch(() => {});
      throw new BodyTooLarge(total, false, response.status);
    }
    chunks.push(value);
  }
  // Copied, even from one chunk, as `arrayBuffer()` copies: the tile's bytes are its own and all
  // its buffer holds (a chunk may be a view into a larger buffer, as Node's pooled ones are, or
  // one a script's stream enqueued and keeps; a map may transfer the tile's buffer away).
  const data = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    data.set(chunk, at);
    at += chunk.byteLength;
  }
  return data;
}

/**
 * Whether requests wait in a browser's pool of connections per host: in a page or a worker (the
 * scopes with a `location`), a few per HTTP/1.1 host, the rest queued; Node, Deno, Bun and workerd
 * queue none of one client's requests.
 */
export function queuesPerHost() {
  return globalThis.location !== undefined;
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
