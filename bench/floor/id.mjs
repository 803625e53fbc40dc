// The wasm floor's id in bench/out/overhead.json, and its label, for the overhead bench and the
// report (which must not load the built module to name it).
export const FLOOR_ID = "wasm-floor";
export const FLOOR_LABEL = "wasm floor (the wrapper's fetch from wasm)";
