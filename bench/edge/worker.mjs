// The tile proxy as bench/edge-scale.mjs deploys it: one createTileHandler from the CONFIG
// binding. DownGate stands for a gate that is bound but failing (every call throws).
import { createTileHandler, UpstreamGate } from "../../pkg/worker.js";

export { UpstreamGate };

export class DownGate {
  async fetch() {
    throw new Error("the gate is down (bench)");
  }
}

let handler = null;

export default {
  fetch(request, env, ctx) {
    handler ??= createTileHandler(env.CONFIG);
    return handler(request, env, ctx);
  },
};
