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
