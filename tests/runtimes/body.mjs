// The runtime test body: the same checks in Node, Deno and Bun (tests/js/runtimes.test.mjs runs
// it in each, in a project where the packed package is installed, so `tilefetch` resolves through
// the package's exports as that runtime resolves them). Prints one JSON line of results.
import { fetchTile, TileClient, TileError } from "tilefetch";

const env = (name) => (globalThis.Deno ? globalThis.Deno.env.get(name) : globalThis.process.env[name]);
const server = env("FAULT_SERVER_URL");
const run = env("RUN");
const FAST = { baseDelayMs: 5, maxDelayMs: 20 };
const url = (z, x, y, q = "") => `${server}/tile/${z}/${x}/${y}.png?run=${run}${q}`;
const hex = (bytes) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

const rejection = async (promise) => {
  try {
    await promise;
    return null;
  } catch (e) {
    return { isTileError: e instanceof TileError, name: e.name, kind: e.kind, status: e.status ?? null, attempts: e.attempts, message: e.message };
  }
};

const client = new TileClient({ maxConcurrent: 4 });
// Six tiles over a flaky server: each of the first two requests of a tile answers 503.
const tiles = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => client.fetchTile(url(3, i, 1, "&f=503&n=2"), FAST)));
let badOption;
try {
  await fetchTile(url(3, 0, 0), { deadlineMs: -1 });
} catch (e) {
  badOption = { isTileError: e instanceof TileError, kind: e.kind, message: e.message };
}
let badClient;
try {
  new TileClient({ maxConcurent: 4 });
} catch (e) {
  badClient = { isTileError: e instanceof TileError, kind: e.kind, message: e.message };
}
const host = Object.values(client.stats())[0];

console.log(
  JSON.stringify({
    resolved: import.meta.resolve("tilefetch"),
    tiles: tiles.map((t) => ({ status: t.status, attempts: t.attempts, contentType: t.contentType, hex: hex(t.data) })),
    notFound: await rejection(fetchTile(url(3, 7, 7, "&f=404"), FAST)),
    serviceException: await rejection(fetchTile(url(3, 6, 6, "&f=sexml&code=LayerNotDefined"), FAST)),
    badOption,
    badClient,
    stats: { requests: host.requests, attempts: host.attempts, retries: host.retries, successes: host.successes },
  }),
);
