// Attempt-level admission: the `fetch` one upstream call's TileClient attempts go through when
// the UpstreamGate binding is there. Before each attempt (first, retry or hedge) it asks the gate
// of the attempt's host; after it, it tells the gate what the attempt met, so that the first
// failures of an outage reach every isolate at once, not when calls give up.
//
// Refused for a quota or rate whose next request is due within QUEUED_MS, an attempt waits and
// asks again (a queue, not a failure). Otherwise a refused attempt is answered here, as a
// gateway would: 503 with the gate's wait as Retry-After
// (in ms precision: the core reads fractions), so the isolate's own TileClient pauses the host for
// that long and its other calls wait without asking again. The quota an upstream states is the
// gate's to spend for the fleet: the rate-limit fields of an answer it was told go to it, and
// are taken off what the isolate's client sees, which would otherwise spend it again as its own;
// while a quota paces it, each answer is told at once (the gate counts what it lets go from them).
// While a rate paces the upstream, a hedge (an attempt of a call whose other attempt is out)
// waits for that attempt, and, when it was answered, for the call to read it and drop the hedge:
// what the quota allows is the waiting tiles'. A gate that fails or does not answer
// within `timeoutMs` lets the attempt go (the isolate's own breaker still applies) and is left
// alone for DOWN_MS: a gate outage costs one timeout, not one per attempt.
import { gateCall } from "./gate.js";
import { RATE_LIMIT_FIELDS } from "../gen/options.js";

/** How long an isolate stops asking a host's gate that failed or timed out. */
export const DOWN_MS = 5000;
/** How long a "closed, go" from a host's gate lets the next attempt go before the gate answers (never while a rate paces it). */
export const CLEAN_MS = 100;

/**
 * @param {object} p
 * @param {(host: string) => object} p.stubFor  the gate stub of an upstream host
 * @param {object} p.cfg   what the gate is told about its settings (gateSettings in gate.js)
 * @param {number} p.timeoutMs  the most one gate RPC may take
 * @param {Map<string, number>} p.down  host → until when its gate is not asked (shared by the handler)
 * @param {Map<string, {count: number, at: number, rateLimit?: string, rateLimitSeq?: number}>} p.answered  host →
 *   attempts that got a 2xx since the last admit, when the latest did, and the rate limit the newest of them (by the
 *   gate's `seq`) stated, told with the next admit (shared by the handler)
 * @param {Map<string, number>} p.clean  host → when its gate last said "closed, go" (0 after a refusal or failure; shared by the handler)
 * @param {Map<string, boolean>} p.paced  host → whether a rate paces it: its gate's latest answer said so, or refused for
 *   the quota or the fleet's rate, or its latest answer stated a quota the gate has not heard of yet (shared by the handler)
 * @param {Map<string, boolean>} [p.quoted]  host → whether its answers state a quota: every attempt to it then waits
 *   for its admit (one sent early is counted by the upstream even when the gate refuses it and it is cut off)
 *   (shared by the handler)
 * @param {(p: Promise<unknown>) => void} p.waitUntil
 * @param {() => number} [p.spare]  the subrequests the call has left (an attempt that waits at the gate asks
 *   again only while the attempt and its report still fit)
 * @param {typeof fetch} [p.send]  how an admitted attempt is sent (the global fetch, or one that follows
 *   the redirects the proxy allows: redirects.js)
 */
export function gatedFetch({
  stubFor,
  cfg,
  timeoutMs,
  down,
  clean,
  answered,
  paced,
  quoted = new Map(),
  waitUntil,
  spare = () => Infinity,
  send = (input, init) => fetch(input, init),
}) {
  // What this call's attempts did: calls of this fetch, upstream requests sent, gate RPCs and their time, the refusal
  // of the latest attempt the gate refused (null once one was sent after it), and the call's turn for the quota
  // (0: none): the gate gives one with a refusal for the quota, and the call's next attempts show it, to go before
  // calls that came since (its client's retry comes after a pause and a backoff).
  const record = { calls: 0, sent: 0, gateCalls: 0, gateMs: 0, refused: null, turn: 0 };
  const pending = new Set(); // this call's attempts in flight
  const ask = async (host, body) => {
    if ((down.get(host) ?? 0) > Date.now()) return null;
    const t = performance.now();
    record.gateCalls++;
    const answer = await gateCall(stubFor(host), body, timeoutMs);
    record.gateMs += performance.now() - t;
    if (answer === null) down.set(host, Date.now() + DOWN_MS);
    return answer;
  };
  const refusal = (verdict) => {
    record.refused = verdict;
    clean.set(verdict.host, 0);
    // A refusal for the quota or the fleet's rate is a wait a call may sit out; others are not.
    paced.set(verdict.host, isWaitable(verdict));
    const seconds = (Math.max(1, verdict.retryAfterMs) / 1000).toFixed(3);
    return new Response(null, { status: 503, headers: { "retry-after": seconds, "x-tilefetch-gate": verdict.reason } });
  };
  const fetcher = (input, init) => {
    const attempt = attemptOf(input, init);
    const forget = () => pending.delete(attempt);
    pending.add(attempt);
    attempt.then(forget, forget);
    return attempt;
  };
  const attemptOf = async (input, init) => {
    record.calls++;
    const host = new URL(typeof input === "string" ? input : input.url).host;
    if (paced.get(host) === true && pending.size > 0) {
      // A hedge of an attempt still out, to an upstream a rate paces: the quota is the waiting
      // tiles', so it waits for that attempt, and is dropped by the call when that one wins.
      await settledOrAborted([...pending], init?.signal);
    }
    const started = Date.now();
    const admit = () => {
      const successes = answered.get(host); // told with this admit
      answered.delete(host);
      const okAgeMs = successes ? Date.now() - successes.at : 0;
      const message = {
        op: "admit",
        host,
        cfg,
        ok: successes?.count ?? 0,
        okAgeMs,
        rateLimit: successes?.rateLimit,
        rateLimitSeq: successes?.rateLimitSeq,
        turn: record.turn,
      };
      return ask(host, message).then((v) => {
        if (v) {
          record.turn = v.allow ? 0 : (v.turn ?? 0);
          const early = v.allow && !v.probe && !v.paced && v.state === "closed" && quoted.get(host) !== true;
          clean.set(host, early ? Date.now() : 0);
          paced.set(host, v.paced === true);
        }
        return v && { ...v, host };
      });
    };
    const admitted = admit();
    let early = null; // the attempt, sent before the gate answered
    if (Date.now() - (clean.get(host) ?? 0) < CLEAN_MS && typeof AbortSignal.any === "function") {
      const own = new AbortController();
      const signal = init?.signal ? AbortSignal.any([init.signal, own.signal]) : own.signal;
      early = { own, response: send(input, { ...init, signal }) };
      early.response.catch(() => {});
    }
    let verdict = await admitted;
    if (verdict && !verdict.allow && early) {
      record.sent++; // it went, and is cut off now
      early.own.abort(new Error("refused by the upstream gate"));
      early = null;
    }
    // Refused for a quota or rate whose next request is due soon: the attempt keeps its place
    // and asks again then, rather than going back to the client as a failure whose retry waits
    // a growing backoff and spends the retry budget while fresh calls take the quota. A longer
    // wait (a window's end) pauses the isolate's calls instead.
    // The wait and the next ask (taken to last as long as the one before) fit in QUEUED_MS.
    let asks = 1;
    let askMs = Date.now() - started;
    const fits = (v) => Date.now() - started + v.retryAfterMs + askMs <= QUEUED_MS;
    while (verdict && !verdict.allow && isWaitable(verdict) && asks < MAX_ASKS && spare() >= 3 && fits(verdict)) {
      await sleep(verdict.retryAfterMs, init?.signal);
      const asked = Date.now();
      verdict = await admit();
      askMs = Date.now() - asked;
      asks++;
    }
    if (verdict && !verdict.allow) return refusal(verdict);
    record.sent++;
    record.refused = null;
    const tell = (fields) => {
      if (!verdict) return null; // the gate did not answer the admit: it hears nothing of this one
      const report = ask(host, { op: "report", host, cfg, probe: verdict.probe === true, seq: verdict.seq, ...fields });
      waitUntil(report);
      return report;
    };
    let response;
    try {
      response = await (early ? early.response : send(input, init));
    } catch (error) {
      // Awaited, like every failure: the next attempt anywhere should already see it.
      // An attempt the client aborted (its caller left, a hedge lost) tells nothing; one that
      // timed out (the core aborts it with a TimeoutError) or failed is a failure.
      const signal = init?.signal;
      clean.set(host, 0);
      await tell({ status: null, abandoned: signal?.aborted === true && signal.reason?.name !== "TimeoutError" });
      throw error;
    }
    // The rate limit the upstream states (RateLimit, X-RateLimit-*): the gate paces the fleet by it.
    const rateLimit = rateLimitFields(response.headers);
    if (rateLimit !== undefined || response.status === 429) {
      // A quota, or a throttle: it paces the upstream from now on, before the gate has been
      // told of it (a pause a 429 sets is waited out, see knownDown in worker.js).
      paced.set(host, true);
      clean.set(host, 0);
    }
    if (rateLimit !== undefined) quoted.set(host, true);
    if (response.ok && verdict && !verdict.probe && !verdict.paced) {
      // A tile (or another 2xx): told with this isolate's next admit, not a report of its own
      // (while a quota paces the upstream, at once: what the gate lets go next is counted from
      // it, and an isolate that waits may not admit again for a window).
      // Of the rate limits stated, the newest attempt's says the most (answers overtake).
      const told = answered.get(host);
      const newer = rateLimit !== undefined && !((told?.rateLimitSeq ?? 0) > verdict.seq);
      const stated = newer ? { rateLimit, rateLimitSeq: verdict.seq } : { rateLimit: told?.rateLimit, rateLimitSeq: told?.rateLimitSeq };
      answered.set(host, { count: (told?.count ?? 0) + 1, at: Date.now(), ...stated });
    } else {
      const report = tell({ status: response.status, retryAfter: response.headers.get("retry-after"), date: response.headers.get("date"), rateLimit });
      if (!response.ok) {
        clean.set(host, 0);
        await report;
      }
    }
    return rateLimit !== undefined && verdict ? withoutRateLimit(response) : response;
  };
  return { fetch: fetcher, record };
}

/** A refusal for the quota or the fleet's rate: a wait, not a failure of the upstream. */
const isWaitable = (verdict) => verdict.reason === "quota" || verdict.reason === "rate";

/**
 * How long an attempt may wait at the gate for a quota or a rate, its asks included: under the
 * shortest attempt timeout the client learns (TIMEOUT_FLOOR_MS in src/retry/serving.rs), so that
 * the wait alone does not time the attempt out as if the upstream hung.
 */
export const QUEUED_MS = 750;
/** How many times an attempt asks the gate before it goes back to the client as refused. */
export const MAX_ASKS = 4;

/** Resolves after `ms`; rejects with the reason when `signal` aborts first. */
function sleep(ms, signal) {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** How long a hedge waits, after the attempt it hedges was answered 2xx, for the call to drop it (it reads that body first). */
export const HEDGE_LINGER_MS = 2000;

/**
 * Resolves when every one of `attempts` has settled, and, when one was answered 2xx, the call
 * has had `HEDGE_LINGER_MS` to read its body and drop this hedge; rejects with the reason when
 * `signal` aborts first.
 */
function settledOrAborted(attempts, signal) {
  if (signal?.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    let timer;
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    Promise.allSettled(attempts).then((outcomes) => {
      const answered = outcomes.some((o) => o.status === "fulfilled" && o.value?.ok);
      timer = setTimeout(
        () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        answered ? HEDGE_LINGER_MS : 0,
      );
    });
  });
}

/** `response` without its rate-limit fields (the gate was told them). */
function withoutRateLimit(response) {
  const headers = new Headers(response.headers);
  for (const name of RATE_LIMIT_FIELDS) headers.delete(name);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** The rate-limit fields `headers` has, as the core reads them (`name: value` lines), or undefined. */
function rateLimitFields(headers) {
  let lines;
  for (const name of RATE_LIMIT_FIELDS) {
    const value = headers.get(name);
    if (value !== null) lines = `${lines ?? ""}${name}: ${value}\n`;
  }
  return lines;
}
