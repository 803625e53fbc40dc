// One upstream call on behalf of one incoming request: fetch through the TileClient with at most
// `cap` attempts, each admitted by its host's shared gate when the binding is there (gated-fetch.js),
// and reduce the result to a plain outcome object (no I/O objects), so that requests coalesced
// onto this call in other request contexts can use it safely.
import { TileError } from "../workerd.js";
// The core's list of request-error codes (the same module instance workerd.js initialised).
import { isRequestError } from "../gen/tilefetch_edge.js";
import { gatedFetch } from "./gated-fetch.js";

const REFUSALS = {
  open: "the shared breaker is open",
  probe: "the shared breaker is probing",
  pause: "the upstream asked to pause",
  rate: "the shared rate limit is reached",
};

/**
 * @typedef {{kind: "tile", status: number, data: Uint8Array, contentType: string | null, empty: boolean}
 *   | {kind: "answer", status: number, message: string}
 *   | {kind: "fail", status: number, errorKind: string, retryAfterMs: number | null, message: string}} Outcome
 *   Each also has `attempts` (upstream requests sent), `coalesced` (served by an identical call's
 *   flight in the client) and `timing` ([[name, ms, desc]]).
 */

/**
 * @param {object} p
 * @param {import("../workerd.js").TileClient} p.client
 * @param {string[]} p.urls  upstream URLs (mirrors), built from the templates only
 * @param {number} p.cap     the most attempts this call may send (≥ 1)
 * @param {{signal: AbortSignal, abort(reason?: unknown): void}} p.control  a context-free signal (signal.js)
 * @param {{stubFor(host: string): object, cfg: object, timeoutMs: number, down: Map<string, number>} | null} p.gate
 *   the upstream hosts' gates (gate.js, gated-fetch.js), or null
 * @param {(p: Promise<unknown>) => void} p.waitUntil
 * @param {string | null} p.referer  the incoming request's Referer, sent upstream when there is one
 * @param {HeadersInit | undefined} p.clientHeaders  the client's `headers`, which a call's own replace
 * @param {(() => void) | undefined} p.onFailure  called when an attempt has failed and the call goes on
 * @param {typeof fetch} [p.send]  how an attempt is sent (the redirects it follows: redirects.js)
 * @returns {Promise<Outcome>}
 */
export async function callUpstream({
  client,
  urls,
  cap,
  control,
  gate,
  waitUntil,
  referer,
  clientHeaders,
  onFailure,
  send = (input, init) => fetch(input, init),
}) {
  const timing = [];
  // The call's own fetch: it counts what this call sent, so a call served by an identical one's
  // flight in the client (whose fetch that was) knows it was coalesced.
  // With a gate, each attempt is budgeted three subrequests (admit, the attempt, report); the
  // re-asks of an attempt that waits at the gate for a quota come out of the same budget.
  const subrequests = cap * 3;
  const used = () => gated.record.gateCalls + gated.record.sent;
  const gated = gate ? gatedFetch({ ...gate, waitUntil, send, spare: () => subrequests - used() }) : countingFetch(send);
  let last = null; // the last RetryInfo: the status and Retry-After of the latest failed attempt
  const onRetry = (info) => {
    last = info;
    onFailure?.();
    // Called before the backoff sleep, so aborting now means no further attempt. Deferred to a
    // microtask: the abort wakes the call inside the client, which is still on the stack here.
    const spent = info.attempt >= cap || (gate && used() + 3 > subrequests);
    if (spent) queueMicrotask(() => control.abort(new Error(`maxSubrequests: ${cap} upstream attempts used`)));
  };
  const t = performance.now();
  let out;
  try {
    const options = {
      signal: control.signal,
      onRetry,
      fetch: gated.fetch,
      ...(referer ? { headers: withReferer(clientHeaders, referer) } : {}),
    };
    const tile = await client.fetchTile(urls.length === 1 ? urls[0] : urls, options);
    out = { kind: "tile", status: tile.status, data: tile.data, contentType: tile.contentType, empty: tile.empty, attempts: tile.attempts };
  } catch (error) {
    out = classify(error, last);
  }
  out.coalesced = gated.record.calls === 0 && out.attempts > 0;
  if (gate && !out.coalesced) {
    const { sent, gateCalls, gateMs, refused } = gated.record;
    out.attempts = sent;
    timing.push(["gate", gateMs, `${gateCalls} call${gateCalls === 1 ? "" : "s"}`]);
    // The call ended on an attempt the gate refused: say so, with the gate's wait.
    if (out.kind === "fail" && refused) {
      Object.assign(out, {
        status: 503,
        errorKind: `gate-${refused.reason}`,
        retryAfterMs: refused.retryAfterMs,
        message: `upstream gate: ${REFUSALS[refused.reason] ?? refused.reason}`,
      });
    }
  }
  timing.push(["upstream", performance.now() - t, `${out.attempts} attempt${out.attempts === 1 ? "" : "s"}`]);
  out.timing = timing;
  return out;
}

/** `send`, counting its calls (`record.calls`, `record.sent`) like gatedFetch does. */
function countingFetch(send) {
  const record = { calls: 0, sent: 0 };
  return {
    record,
    fetch: (input, init) => {
      record.calls++;
      record.sent++;
      return send(input, init);
    },
  };
}

/** The client's headers plus the page's Referer (a call's `headers` replace the client's whole). */
function withReferer(clientHeaders, referer) {
  const headers = new Headers(clientHeaders ?? undefined);
  headers.set("referer", referer);
  return headers;
}

/** A TileError (or anything thrown) → an outcome. */
function classify(error, last) {
  const attempts = Number.isInteger(error?.attempts) ? error.attempts : 0;
  const kind = error instanceof TileError || error?.kind === "deadline" ? error.kind : "internal";
  const message = `upstream ${kind}${error?.status ? ` (HTTP ${error.status})` : ""}`;
  switch (kind) {
    case "invalid-options":
      console.error(`tilefetch/worker: ${error.message}`); // the answer does not name the upstream
      return {
        kind: "fail",
        status: 500,
        errorKind: kind,
        retryAfterMs: null,
        message: "tile proxy misconfigured (see the worker's log)",
        attempts,
      };
    case "too-large":
    case "range-unsupported":
      // The upstream is serving, the URL is wrong (no tile is that large): an answer, never a
      // tile to cache, and nothing against the upstream's health.
      return { kind: "answer", status: 502, message: "upstream tile larger than maxBytes", attempts };
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: a transient one is judged as "http" is
    case "service-exception":
      // The upstream is up and says the request is wrong (LayerNotDefined, TileOutOfRange …):
      // an answer, like a permanent 4xx, that must not count against the upstream's health. (A
      // transient one whose retries were refused is a failure like those below.)
      if (typeof error.exceptionCode === "string" && isRequestError(error.exceptionCode)) {
        return { kind: "answer", status: 502, message: `upstream service exception ${error.exceptionCode}`, attempts };
      }
    // falls through
    // biome-ignore lint/suspicious/noFallthroughSwitchClause: any other status is a failure like those below
    case "http":
      // A permanent 4xx (404, 410, 403 …): the upstream is up and has answered. A 5xx (or 408,
      // 425, 429) comes as "http" too when it was not retried (the retry budget refused, or it is
      // not in `retryOn`): that is a failure like the ones below.
      if (error.status >= 400 && error.status < 500 && ![408, 425, 429].includes(error.status)) {
        return { kind: "answer", status: error.status, message: `upstream answered ${error.status}`, attempts };
      }
    // falls through
    default: {
      // rate-limited, circuit-open, deadline, network, timeout, invalid-response, aborted (our
      // subrequest cap): no tile now. 429 when the upstream said so, else 503.
      const upstream429 = error?.status === 429 || error?.cause?.status === 429 || last?.status === 429;
      const retryAfterMs = Number.isFinite(error?.retryAfterMs) ? error.retryAfterMs : (last?.retryAfterMs ?? null);
      return {
        kind: "fail",
        status: upstream429 ? 429 : 503,
        errorKind: kind,
        retryAfterMs,
        message,
        attempts,
      };
    }
  }
}
