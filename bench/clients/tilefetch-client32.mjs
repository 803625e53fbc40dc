// tilefetch's TileClient with the per-host limit fixed at the harness's own concurrency (32):
// nothing waits in its queue, so this row shows what tilefetch itself costs, apart from the
// default's limit (16 per host to start, grown while the host answers as fast; see the fixed-16
// row). Everything else is default (interactive preset, FIFO queue).
import { fixedLimitClient } from "./tilefetch-fixed-limit.mjs";

export const { label, anchor, config, create } = fixedLimitClient(
  32,
  "tilefetch TileClient, 32 per host",
  "`new TileClient({ maxConcurrent: 32 })` (the harness's concurrency; defaults otherwise)",
);
