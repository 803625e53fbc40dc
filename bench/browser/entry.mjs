// What the Chromium benches load (bundled by bench/bundle.mjs into bench/out/browser/bench.js):
// the same client adapters, anchors included, and the same rounds as in Node.
export { CLIENTS } from "../clients/index.mjs";
export { batch, runRounds } from "../overhead-rounds.mjs";
