// Browser bundles made with rolldown (a devDependency): each anchor minified as a user's bundler
// would ship it (size, start-up) and the clients + rounds for the Chromium overhead bench.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { CLIENTS } from "./clients/index.mjs";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, "..");
export const OUT = path.join(HERE, "out");

/** Bundles `input` (a file) to one minified ESM file `file` (`external`: rolldown's); returns its bytes. */
export async function bundle(input, file, { minify = true, external } = {}) {
  const result = await build({
    input,
    cwd: ROOT,
    external,
    platform: "browser",
    write: false,
    logLevel: "warn",
    output: { format: "esm", minify },
  });
  const chunks = (result.output ?? []).filter((c) => c.type === "chunk");
  if (chunks.length !== 1) throw new Error(`${input}: expected one chunk, got ${chunks.map((c) => c.fileName)}`);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, chunks[0].code);
  return Buffer.from(chunks[0].code);
}

/**
 * The entry that re-exports exactly what a client adapter imports from its anchor package, read
 * from the adapter's own import statement: the anchor as the adapter uses it, tree-shaken.
 */
export function anchorEntry(clientId) {
  const { anchor } = CLIENTS[clientId];
  const source = fs.readFileSync(path.join(HERE, "clients", `${clientId}.mjs`), "utf8");
  const lines = [];
  for (const m of source.matchAll(/^import\s+([^;]+?)\s+from\s+"([^"]+)";/gm)) {
    if (m[2] !== anchor) continue;
    const clause = m[1];
    const named =
      /\{([^}]*)\}/
        .exec(clause)?.[1]
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean) ?? [];
    const def = clause
      .replace(/\{[^}]*\}/, "")
      .replace(/,/g, "")
      .trim();
    const names = [...(def ? ["default"] : []), ...named];
    lines.push(`export { ${names.join(", ")} } from "${anchor}";`);
  }
  if (lines.length === 0) throw new Error(`bench/clients/${clientId}.mjs does not import ${anchor}`);
  return `${lines.join("\n")}\n`;
}

/** Bundles the anchor of `clientId` to bench/out/anchors/<anchor>.min.js; returns the bytes. */
export async function bundleAnchor(clientId) {
  const { anchor } = CLIENTS[clientId];
  const entry = path.join(OUT, "entries", `${anchor}.mjs`);
  fs.mkdirSync(path.dirname(entry), { recursive: true });
  fs.writeFileSync(entry, anchorEntry(clientId));
  return bundle(entry, path.join(OUT, "anchors", `${anchor}.min.js`));
}

/** The ids of the clients that measure an npm anchor (not the baselines, not tilefetch). */
export const anchorClients = () => Object.keys(CLIENTS).filter((id) => CLIENTS[id].anchor && CLIENTS[id].anchor !== "tilefetch");

/** The exact installed version of a package in the root node_modules. */
export const installedVersion = (pkg) => JSON.parse(fs.readFileSync(path.join(ROOT, "node_modules", pkg, "package.json"), "utf8")).version;
