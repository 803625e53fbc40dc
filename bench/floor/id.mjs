// The wasm floor's id in bench/out/overhead.json, and its label, for the overhead bench and the
// report (which must not load the built module to name it).
import fs from "node:fs";
import { fileURLToPath } from "node:url";

export const FLOOR_ID = "wasm-floor";
export const FLOOR_LABEL = "wasm floor (the wrapper's fetch from wasm)";
export const FLOOR_BUILT = fileURLToPath(new URL("../../target/floor/pkg/tilefetch_bench_floor.js", import.meta.url));

/** Whether bench/floor/build.sh has built it; a bench without it leaves its row out. */
export const floorIsBuilt = () => fs.existsSync(FLOOR_BUILT);
