// UpstreamGate: one Durable Object per upstream host holds what every isolate should share about
// that host: the core's own breaker, Retry-After pause and (optional) rate (src/host/gate.rs, through
// the wasm module's UpstreamGateState). Isolates ask it before each upstream attempt (`admit`)
// and tell it what the attempt met (`report`); see worker/gated-fetch.js. Without the binding
// each isolate relies on its own TileClient only.
//
// RPC: POST JSON to the stub, answered with JSON.
//   {op: "admit", host, cfg, ok, okAgeMs, rateLimit, rateLimitSeq, turn} → {allow, probe, seq, paced, retryAfterMs, reason, state, turn}
//       ok: how many of the isolate's attempts got a tile since its last admit, the latest okAgeMs
//       ago (a success is told with the next admit, not a report of its own; failures and probes
//       are reported). Successes from before the gate's latest failure do not break its run.
//       rateLimit: the rate-limit fields the newest of them stated, as `name: value` lines
//       (RATE_LIMIT_FIELDS), and rateLimitSeq: that attempt's seq; the gate paces the upstream
//       by them, for every isolate (less the attempts it admitted after that one).
//       seq: the admitted attempt's number; paced: a rate paces the upstream, so no attempt may
//       go before its admit is answered.
//       turn (out): a refused attempt's place in line for the quota (0: none); (in) the turn the
//       call's last refusal gave, so that it goes before attempts that came since
//       (src/host/turns.rs).
//   {op: "report", host, cfg, probe, seq, status, retryAfter, date, abandoned, rateLimit} → {}
//       status: the attempt's HTTP status, or null when it failed without a response (unless
//       `abandoned`: the isolate aborted it, which tells nothing); retryAfter, date: its headers.
//   {op: "state"}               → a snapshot, for tests and debugging
// cfg: the GATE_KEYS of the worker's gate config, sent with every call (the object has no
// config of its own); a changed cfg starts the state afresh.
//
// State is kept in memory: if the object is evicted the breaker starts closed, which is the safe
// direction for availability (each isolate's own breaker still applies).
// The names of the settings the core's gate reads, from the core's option registry.
import { GATE_KEYS } from "../gen/options.js";
import { UpstreamGateState } from "../gen/tilefetch_edge.js";

const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export class UpstreamGate {
  constructor(_state, _env) {
    this.gate = null;
    this.cfgKey = "";
  }

  async fetch(request) {
    let msg;
    try {
      msg = await request.json();
    } catch {
      return json({ error: "expected a JSON body" }, 400);
    }
    const now = Date.now();
    if (msg?.op === "state") return json(this.gate ? this.gate.state(now) : { state: "closed", admitted: 0, denied: 0, ok: 0, failed: 0, opened: 0 });
    if (msg?.op !== "admit" && msg?.op !== "report") return json({ error: `unknown op ${JSON.stringify(msg?.op)}: admit, report or state` }, 400);
    const cfg = msg.cfg ?? {};
    const key = JSON.stringify(cfg);
    if (!this.gate || key !== this.cfgKey) {
      try {
        this.gate?.free();
        this.gate = new UpstreamGateState(String(msg.host ?? ""), cfg, now);
        this.cfgKey = key;
      } catch (error) {
        this.gate = null;
        return json({ error: String(error?.message ?? error) }, 400);
      }
    }
    if (msg.op === "admit") return json(this.gate.admit(msg, now));
    this.gate.report(msg, now);
    return json({});
  }
}

/** The gate config the core reads, from the worker's resolved `gate` and the call deadline. */
export function gateSettings(gate, deadlineMs) {
  const all = { ...gate, probeLeaseMs: deadlineMs + 1000 };
  return Object.fromEntries(GATE_KEYS.map((k) => [k, all[k] ?? null]));
}

/**
 * The isolate's side: a function from an upstream host to the stub of that host's gate, or null
 * when the binding is absent. One object per host (`gate.name` prefixes the host when set).
 * Made per upstream call: a Durable Object stub belongs to the request that made it.
 */
export function gateStubs(env, gateConfig) {
  const ns = gateConfig && env ? env[gateConfig.binding] : undefined;
  if (!ns || typeof ns.idFromName !== "function") return null;
  const stubs = new Map();
  return (host) => {
    let stub = stubs.get(host);
    if (!stub) {
      stub = ns.get(ns.idFromName(gateConfig.name ? `${gateConfig.name}/${host}` : host));
      stubs.set(host, stub);
    }
    return stub;
  };
}

/**
 * One RPC with a timeout. Resolves to the answer, or null when the gate did not answer in time
 * or failed: the caller then fails open (the isolate's own breaker still protects the upstream).
 */
export async function gateCall(stub, body, timeoutMs) {
  let timer;
  const timeout = new Promise((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  const call = Promise.resolve()
    .then(() => stub.fetch("https://upstream-gate.internal/", { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } }))
    .then((r) => (r.ok ? r.json() : null))
    .catch(() => null);
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
