// tilefetch as it was when the "boundary" issue was filed, as the benches name it; built by
// bench/before/build.sh into target/before/ (complete once target/before/.commit exists).
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const BEFORE_COMMIT = "7973870";
export const BEFORE_ID = "tilefetch-before";
export const BEFORE_LABEL = `tilefetch fetchTile at ${BEFORE_COMMIT} (before)`;
export const BEFORE_DIR = fileURLToPath(new URL("../../target/before/", import.meta.url));

/** Its package entry for Node, and the wasm-opt name mapping its build kept. */
export const BEFORE_PKG = path.join(BEFORE_DIR, "pkg/node.js");
export const BEFORE_MAPPING = path.join(BEFORE_DIR, "target/wasm-names.json");

/** Whether bench/before/build.sh has built the module (its marker is written last). */
export const beforeIsBuilt = () => fs.existsSync(path.join(BEFORE_DIR, ".commit"));

/** The size line the old build printed, or null. */
export const beforeSizeLine = () => {
  try {
    return fs.readFileSync(path.join(BEFORE_DIR, "size.txt"), "utf8").trim() || null;
  } catch {
    return null;
  }
};
