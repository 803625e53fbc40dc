// Small statistics shared by the benches.

/** The q-quantile (0..1) of numbers, nearest-rank on a sorted copy; null for none. */
export function quantile(values, q) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** The median: the middle value, or the mean of the two middle ones; null for none. */
export function median(values) {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Counts of `times` (ms) per `binMs` bin from `from`, as an array covering [from, to). */
export function bins(times, { from = 0, to, binMs = 100 }) {
  const n = Math.max(1, Math.ceil((to - from) / binMs));
  const out = new Array(n).fill(0);
  for (const t of times) {
    const i = Math.floor((t - from) / binMs);
    if (i >= 0 && i < n) out[i]++;
  }
  return out;
}

/** A seeded PRNG (mulberry32): numbers in [0, 1), the same ones for the same seed. */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * How far a median of paired ratios moves with the rounds it was drawn from: the 2.5 % and 97.5 %
 * quantiles of `median(all values of the groups drawn)` over `draws` resamples of the groups (the
 * rounds), drawn with replacement by a seeded generator, so a report prints the same interval
 * for the same runs. `groups`: an array of arrays of values (one array per round).
 */
export const BOOTSTRAP_DRAWS = 2000;

export function bootstrapMedianInterval(groups, { draws = BOOTSTRAP_DRAWS, seed = 1 } = {}) {
  const kept = groups.filter((g) => g.length > 0);
  if (kept.length === 0) return null;
  const next = prng(seed);
  const medians = [];
  for (let d = 0; d < draws; d++) {
    const values = [];
    for (let i = 0; i < kept.length; i++) values.push(...kept[Math.floor(next() * kept.length)]);
    medians.push(median(values));
  }
  return [quantile(medians, 0.025), quantile(medians, 0.975)];
}
