// The overhead measurement itself, the same in Node and in Chromium: every client fetches the
// same healthy tiles, in rounds; within a round the clients take turns, each round starting one
// client further along, so drift (JIT, GC, a busy machine) spreads over all of them.

/** One batch: `tiles` calls, `concurrency` at a time; returns wall ms (and CPU µs if `cpu`). */
export async function batch(client, urls, concurrency, cpu) {
  const cpu0 = cpu?.();
  const t0 = performance.now();
  let next = 0;
  const worker = async () => {
    while (next < urls.length) {
      const url = urls[next++];
      const data = await client.get(url, new AbortController().signal);
      if (!(data instanceof Uint8Array) || data.length < 100) throw new Error(`${url}: not a tile`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const wallMs = performance.now() - t0;
  return { wallMs, cpuUs: cpu ? cpu() - cpu0 : null };
}

/**
 * Runs `warmup` + `rounds` rounds over `clients` ({id: {get}}) and returns, per client id, the
 * measured rounds' [{wallMs, cpuUs}]. `cpu()` returns process CPU µs (Node) or is absent.
 */
export function runRounds({ clients, urls, concurrency = 32, rounds = 11, warmup = 2, cpu }) {
  return inTurns(Object.keys(clients), { rounds, warmup }, (id) => batch(clients[id], urls, concurrency, cpu));
}

/**
 * The rounds themselves: `measure(id)` for each of `ids` in turn, each round starting one further
 * along; per id, what the measured rounds' `measure` returned.
 */
export async function inTurns(ids, { rounds, warmup }, measure) {
  const samples = Object.fromEntries(ids.map((id) => [id, []]));
  for (let r = 0; r < warmup + rounds; r++) {
    for (let k = 0; k < ids.length; k++) {
      const id = ids[(r + k) % ids.length];
      const s = await measure(id);
      if (r >= warmup) samples[id].push(s);
    }
  }
  return samples;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/**
 * Per client: median wall ms, median of the per-round ratio to `baseline`'s wall time, median
 * per-call wall overhead µs against it, and (with CPU samples) CPU µs per call and the extra
 * over the baseline and over `reference` (the plain JS wrapper), each the median of the
 * differences within a round.
 */
export function summarise(samples, { baseline = "raw-fetch", reference = "plain-wrapper", tiles }) {
  const base = samples[baseline];
  const ref = samples[reference];
  const out = {};
  for (const [id, runs] of Object.entries(samples)) {
    const pair = (f, other = base) => median(runs.map((s, i) => f(s, other[i])));
    out[id] = {
      wallMs: median(runs.map((s) => s.wallMs)),
      ratio: pair((s, b) => s.wallMs / b.wallMs),
      ratioRange: [Math.min(...runs.map((s, i) => s.wallMs / base[i].wallMs)), Math.max(...runs.map((s, i) => s.wallMs / base[i].wallMs))],
      overheadUsPerCall: pair((s, b) => ((s.wallMs - b.wallMs) * 1000) / tiles),
      cpuUsPerCall: runs[0].cpuUs == null ? null : median(runs.map((s) => s.cpuUs / tiles)),
      extraCpuUsPerCall: runs[0].cpuUs == null ? null : pair((s, b) => (s.cpuUs - b.cpuUs) / tiles),
      extraCpuOverReferenceUsPerCall: runs[0].cpuUs == null || !ref ? null : pair((s, r) => (s.cpuUs - r.cpuUs) / tiles, ref),
    };
  }
  return out;
}
