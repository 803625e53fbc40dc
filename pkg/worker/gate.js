// UpstreamGate: one Durable Object per upstream holds the state that every isolate should share
// about that upstream: a circuit breaker over call outcomes, a pause (the upstream's Retry-After)
// and an optional token bucket. Isolates ask it before they send (`admit`) and tell it how the
// call went (`report`); without the binding each isolate relies on its own TileClient only.
//
// RPC: POST JSON to the stub, answered with JSON.
//   {op: "admit", cfg}                 → {allow, probe, retryAfterMs, reason, state}
//   {op: "report", ok, probe, retryAfterMs?, cfg} → {state}
//       ok: true (a tile or an authoritative answer such as 404), false (the call failed for a
//       transient reason: outage, deadline, 5xx, 429), null (nothing was sent; frees a probe).
//   {op: "state"}                      → a snapshot, for tests and debugging
// cfg = {failureThreshold, openMs, maxOpenMs, ratePerSecond, burst, probeLeaseMs}: sent with
// every call (the object has no config of its own), the latest wins.
//
// Breaker: `failureThreshold` consecutive failed reports open it for `openMs`; then one probe is
// admitted (others are refused until it reports or its lease of `probeLeaseMs` ends); the probe's
// success closes it, its failure reopens it 1.5× longer, up to `maxOpenMs`. A success reported at
// any time closes it. State is kept in memory: if the object is evicted the breaker starts closed,
// which is the safe direction for availability (each isolate's own breaker still applies).

const json = (body, status = 200) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });

export class UpstreamGate {
  constructor(_state, _env) {
    this.breaker = "closed";
    this.failures = 0;
    this.openUntil = 0;
    this.openMs = 0;
    this.probeUntil = 0;
    this.pausedUntil = 0;
    this.tokens = null;
    this.refilledAt = 0;
    this.counts = { admitted: 0, denied: 0, ok: 0, failed: 0, opened: 0 };
  }

  async fetch(request) {
    let msg;
    try {
      msg = await request.json();
    } catch {
      return json({ error: "expected a JSON body" }, 400);
    }
    const now = Date.now();
    if (msg?.op === "admit") return json(this.admit(msg.cfg ?? {}, now));
    if (msg?.op === "report") return json(this.report(msg, msg.cfg ?? {}, now));
    if (msg?.op === "state") return json(this.snapshot(now));
    return json({ error: `unknown op ${JSON.stringify(msg?.op)}: admit, report or state` }, 400);
  }

  admit(cfg, now) {
    const deny = (retryAfterMs, reason) => {
      this.counts.denied++;
      return { allow: false, probe: false, retryAfterMs: Math.max(1, Math.ceil(retryAfterMs)), reason, state: this.breaker };
    };
    if (this.pausedUntil > now) return deny(this.pausedUntil - now, "pause");
    if (this.breaker === "open") {
      if (now < this.openUntil) return deny(this.openUntil - now, "open");
      this.breaker = "half-open";
    }
    if (this.breaker === "half-open") {
      if (this.probeUntil > now) return deny(Math.min(1000, this.probeUntil - now), "probe");
      this.probeUntil = now + (cfg.probeLeaseMs ?? 10000);
      this.counts.admitted++;
      return { allow: true, probe: true, retryAfterMs: 0, reason: "probe", state: this.breaker };
    }
    if (cfg.ratePerSecond > 0) {
      const burst = cfg.burst ?? Math.max(1, Math.ceil(cfg.ratePerSecond));
      this.tokens = this.tokens === null ? burst : Math.min(burst, this.tokens + ((now - this.refilledAt) / 1000) * cfg.ratePerSecond);
      this.refilledAt = now;
      if (this.tokens < 1) return deny(((1 - this.tokens) / cfg.ratePerSecond) * 1000, "rate");
      this.tokens -= 1;
    }
    this.counts.admitted++;
    return { allow: true, probe: false, retryAfterMs: 0, reason: "ok", state: this.breaker };
  }

  report(msg, cfg, now) {
    if (msg.probe) this.probeUntil = 0;
    if (msg.ok === true) {
      this.counts.ok++;
      this.failures = 0;
      this.breaker = "closed";
      this.openMs = 0;
    } else if (msg.ok === false) {
      this.counts.failed++;
      if (msg.retryAfterMs > 0) this.pausedUntil = Math.max(this.pausedUntil, now + Math.min(msg.retryAfterMs, 3_600_000));
      const threshold = cfg.failureThreshold ?? 5;
      if (this.breaker === "half-open" && msg.probe) {
        this.open(Math.min(cfg.maxOpenMs ?? 30000, Math.max(this.openMs, 1) * 1.5), now);
      } else if (this.breaker === "closed" && ++this.failures >= threshold) {
        this.open(cfg.openMs ?? 2000, now);
      }
    }
    return { state: this.breaker };
  }

  open(ms, now) {
    this.breaker = "open";
    this.openMs = ms;
    this.openUntil = now + ms;
    this.failures = 0;
    this.counts.opened++;
  }

  snapshot(now) {
    return {
      state: this.breaker === "open" && now >= this.openUntil ? "half-open" : this.breaker,
      failures: this.failures,
      openUntil: this.breaker === "open" ? this.openUntil : null,
      retryAfterMs: Math.max(0, (this.breaker === "open" ? this.openUntil : 0) - now, this.pausedUntil - now),
      pausedUntil: this.pausedUntil > now ? this.pausedUntil : null,
      tokens: this.tokens,
      ...this.counts,
    };
  }
}

/** The isolate's side: a stub for the upstream's gate, or null when the binding is absent. */
export function gateStub(env, gateConfig, defaultName) {
  const ns = gateConfig && env ? env[gateConfig.binding] : undefined;
  if (!ns || typeof ns.idFromName !== "function") return null;
  return ns.get(ns.idFromName(gateConfig.name ?? defaultName));
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
  const call = stub
    .fetch("https://upstream-gate.internal/", { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } })
    .then((r) => (r.ok ? r.json() : null))
    .catch(() => null);
  try {
    return await Promise.race([call, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
