// tilefetch's TileClient with the per-host limit set to its default's number (16), which fixes
// it: the limit every earlier release had. Beside the default row it shows what the adaptive
// limit changes, and that a server under strain sees no more at once than this one sent it.
import { fixedLimitClient } from "./tilefetch-fixed-limit.mjs";

export const { label, anchor, config, create } = fixedLimitClient(
  16,
  "tilefetch TileClient, fixed 16 per host",
  "`new TileClient({ maxConcurrent: 16 })` (the limit fixed at the default's number; defaults otherwise)",
);
