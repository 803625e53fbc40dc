// The fault scenarios of the fault benchmark: what the loopback fault server does to every tile
// request (query parameters of tests/server/fault-server.mjs). Each (client, scenario) run gets
// its own server, so a scenario is its own host to every client that keeps per-host state.
export const SCENARIOS = [
  { id: "ok", title: "healthy", params: {} },
  { id: "flaky-503", title: "flaky 503 (p = 0.3)", params: { f: "503", p: "0.3" } },
  // 100 tiles/s with a burst of 20: 400 tiles need ≥ 3.8 s even when every client is perfect.
  // `pacing`: the server's limit, for the time a perfectly paced client needs for 95 % of the tiles.
  {
    id: "bucket-429",
    title: "429 token bucket (100/s, burst 20), Retry-After: 1",
    params: { f: "bucket", rate: "100", burst: "20", ra: "1" },
    pacing: { rate: 100, burst: 20 },
  },
  {
    id: "bucket-429-date",
    title: "429 token bucket (100/s, burst 20), Retry-After: HTTP-date +1 s",
    params: { f: "bucket", rate: "100", burst: "20", ra: "date:1" },
    pacing: { rate: 100, burst: 20 },
  },
  // A bucket that states itself on every answer (RateLimit-Policy "tiles";q=50;w=1 and RateLimit
  // "tiles";r=…;t=…): a client that reads it need not be refused at all. `stated`: the report
  // counts the 429s and how much of the stated rate was used.
  {
    id: "stated-quota",
    title: "token bucket that states its quota (RateLimit, 50/s, burst 50), 429 + Retry-After: 1",
    params: { f: "bucket", rate: "50", burst: "50", ra: "1", stated: "1" },
    pacing: { rate: 50, burst: 50 },
    stated: true,
  },
  { id: "retry-after-86400", title: "429 + Retry-After: 86400 on every request", params: { f: "429", ra: "86400" } },
  // One misconfigured response in five: a healthy host whose header says "back tomorrow".
  { id: "retry-after-absurd", title: "20 % 503 + Retry-After: 86400, the rest fine", params: { f: "503", p: "0.2", ra: "86400" } },
  // 100 ms per answer (a realistic tile latency: 400 tiles at 32 in flight take ≥ 1.25 s), then
  // every request arriving in [250 ms, 3250 ms) of the workload gets 503 "outage".
  { id: "outage", title: "3 s outage (503) from 250 ms, then recovery; 100 ms per answer", params: { delay: "100" }, outage: { atMs: 250, ms: 3000 } },
  // The same, half a second longer: a client retrying 1 s and then 2 s after a failure (p-retry's
  // and fetch-retry's defaults) sends its retries into the 3 s outage's very end, and into this
  // one's last half second; recovery is measured against an outage no schedule is tuned to.
  { id: "outage-3500", title: "3.5 s outage (503) from 250 ms, then recovery; 100 ms per answer", params: { delay: "100" }, outage: { atMs: 250, ms: 3500 } },
  { id: "hang", title: "hang (p = 0.1)", params: { f: "hang", p: "0.1" } },
  { id: "reset", title: "reset mid-body (p = 0.1)", params: { f: "reset", p: "0.1" } },
  { id: "truncate", title: "truncated body (p = 0.1)", params: { f: "truncate", p: "0.1" } },
  { id: "sexml", title: "200 + ServiceException XML (p = 0.2)", params: { f: "sexml", p: "0.2" } },
  { id: "html", title: "200 + HTML error page (p = 0.2)", params: { f: "html", p: "0.2" } },
  { id: "404", title: "permanent 404", params: { f: "404" }, permanent: true },
  { id: "403", title: "permanent 403", params: { f: "403" }, permanent: true },
  // Pareto(50 ms, α 0.8) capped at 30 s: median ≈ 120 ms, ~3 % over 4 s, ~2 % over 6 s.
  { id: "slow-tail", title: "heavy-tailed slow responses (Pareto 50 ms, α 0.8, cap 30 s)", params: { tailms: "50", alpha: "0.8", tailmaxms: "30000" } },
  // Every answer after 2–3 s and no fault: a WMS that renders each GetMap, a tile server under
  // load. A view's worth of tiles at once, each under the 20 s a map-view step allows: the
  // tiles queue behind each other, and a client must not take queued for failed.
  {
    id: "slow-healthy",
    title: "slow, healthy server (every answer 2–3 s), 40 tiles at once",
    params: { delay: "2000", delayjitter: "1000" },
    run: { tiles: 40, concurrency: 40, deadlineMs: 20_000 },
  },
  // A quota of 60 requests per fixed window of 2 s, stated in the draft's fields on every answer,
  // 429 + Retry-After (until the window ends) past it: the quota comes back whole when the window
  // ends, not gradually. `window`: the report's floor, the windows the tiles need.
  {
    id: "fixed-window",
    title: "fixed-window quota (60 per 2 s, stated: RateLimit), 429 + Retry-After until it resets",
    params: { f: "window", q: "60", w: "2", stated: "1" },
    run: { tiles: 200, concurrency: 32 },
    window: { quota: 60, seconds: 2 },
  },
];

/**
 * The least wall time `tiles` requests can take against a fixed window `{quota, seconds}`: they
 * need ceil(tiles / quota) windows, and the last of these opens (count − 1) windows after the
 * first request, however well a client paces itself.
 */
export const windowFloorMs = (tiles, { quota, seconds }) => (Math.ceil(tiles / quota) - 1) * seconds * 1000;

export const scenarioById = (id) => {
  const s = SCENARIOS.find((x) => x.id === id);
  if (!s) throw new Error(`unknown scenario ${id}; known: ${SCENARIOS.map((x) => x.id).join(", ")}`);
  return s;
};
