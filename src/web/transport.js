// One attempt's JS half: fetch, the whole body, and the few headers classification reads, in one
// call from the wasm module. Each crossing between wasm and JS (and each header name passed
// across as a string) costs every tile, so they are batched here.

const FACTS = ["content-type", "content-encoding", "content-length", "retry-after", "age", "date"];

/**
 * Resolves with [response, body bytes, status, ...FACTS values (string or undefined)].
 * Rejects as `fetch` or the body read does.
 */
export async function fetchWhole(scope, input, init) {
  const response = await scope.fetch(input, init);
  const data = new Uint8Array(await response.arrayBuffer());
  const out = [response, data, response.status];
  for (const name of FACTS) out.push(response.headers.get(name) ?? undefined);
  return out;
}
