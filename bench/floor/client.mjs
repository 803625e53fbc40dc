// The floor of the overhead bench: the plain JS wrapper (bench/clients/plain-wrapper.mjs), with
// its fetch, header reads and body read done by a wasm-bindgen async function
// (bench/floor/src/lib.rs). Its CPU over the wrapper is what a call pays for crossing into wasm
// and awaiting fetch's promises there, before any work of the library's own. Node only; built
// by bench/floor/build.sh.
import { createRequire } from "node:module";
import { FLOOR_BUILT, FLOOR_LABEL } from "./id.mjs";

export const label = FLOOR_LABEL;
export const anchor = null;
export const config = "the plain JS wrapper, with fetch, two header reads and the body read in a wasm-bindgen async fn (bench/floor/)";

const ATTEMPT_TIMEOUT_MS = 4000;

export function create() {
  const floor = createRequire(import.meta.url)(FLOOR_BUILT);
  return {
    async get(url, signal) {
      const controller = new AbortController();
      const forward = () => controller.abort(signal.reason);
      signal.addEventListener("abort", forward, { once: true });
      const timer = setTimeout(() => controller.abort(new DOMException("timed out", "TimeoutError")), ATTEMPT_TIMEOUT_MS);
      try {
        return await floor.get(url, controller.signal);
      } finally {
        clearTimeout(timer);
        signal.removeEventListener("abort", forward);
      }
    },
  };
}
