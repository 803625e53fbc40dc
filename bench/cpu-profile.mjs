// A page's main thread, sampled by Chromium's profiler (the DevTools protocol) around a stretch
// of a benchmark: where its busy time went, by function. For bench/mapview.mjs --cpu-profile.

/** Functions kept per stretch, heaviest self time first: enough to tell two loaders apart. */
const KEPT_FUNCTIONS = 15;
/** µs between samples: Chromium's finest, for steps of tens of ms. */
const SAMPLING_INTERVAL_US = 100;

/**
 * A profiler on `page` (Playwright's), sampling every SAMPLING_INTERVAL_US. `measure(fn)` runs `fn` under it and
 * returns `{ value, cpu }`: `fn`'s value, and `cpu`, the stretch's busy ms (every sample but idle:
 * scripts, GC, the renderer's own work) and its heaviest functions by self ms ("name file:line:col").
 */
export async function stepProfiler(page) {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Profiler.enable");
  await cdp.send("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US });
  return {
    async measure(fn) {
      await cdp.send("Profiler.start");
      try {
        const value = await fn();
        return { value, cpu: summary((await cdp.send("Profiler.stop")).profile) };
      } catch (error) {
        await cdp.send("Profiler.stop").catch(() => {});
        throw error;
      }
    },
  };
}

/**
 * A CDP profile's busy ms and heaviest functions by self time ("name file:line:column", 1-based
 * as an editor shows them). A sample stands for the time until the next one (the last: until the
 * profile's end), as DevTools counts it; `timeDeltas[i]` is the time since the sample before.
 */
export function summary(profile) {
  const frames = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const selfMs = new Map();
  let busyMs = 0;
  let at = profile.startTime;
  const times = profile.timeDeltas.map((delta) => (at += delta));
  profile.samples.forEach((id, i) => {
    const frame = frames.get(id);
    const ms = ((i + 1 < times.length ? times[i + 1] : profile.endTime) - times[i]) / 1000;
    if (frame.functionName === "(idle)") return;
    busyMs += ms;
    const file = frame.url.split("/").pop().split("?")[0];
    const key = `${frame.functionName || "(anonymous)"}${file ? ` ${file}:${frame.lineNumber + 1}:${frame.columnNumber + 1}` : ""}`;
    selfMs.set(key, (selfMs.get(key) ?? 0) + ms);
  });
  const top = [...selfMs].sort((a, b) => b[1] - a[1]).slice(0, KEPT_FUNCTIONS);
  return { busyMs: Math.round(busyMs * 10) / 10, top: top.map(([fn, ms]) => ({ fn, ms: Math.round(ms * 10) / 10 })) };
}
