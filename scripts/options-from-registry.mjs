// Writes what the option registry (src/options/registry.rs) declares into the package and the
// docs, so an option is declared once: `pkg/gen/options.js` (the option names, which the
// adapters ask), `pkg/gen/options.d.ts` (the `FetchTileOptions` interface, each option with its
// type, documentation and `@default`), and the options table of docs/reference.md (between its
// `<!-- options -->` markers). Run by scripts/build.sh; `--check` only reports whether
// docs/reference.md is current (exit 1 if not).
//
//   node scripts/options-from-registry.mjs [--check]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const REFERENCE = path.join(ROOT, "docs/reference.md");
const BEGIN = "<!-- options: written from src/options/registry.rs by scripts/options-from-registry.mjs -->";
const END = "<!-- /options -->";

/** The registry as `examples/option_registry.rs` prints it. */
export function readRegistry() {
  const out = execFileSync("cargo", ["run", "--quiet", "--example", "option_registry"], { cwd: ROOT, encoding: "utf8" });
  return JSON.parse(out);
}

/** A default as JavaScript writes it (`[408, 425]`, `"full"`, `100`). */
export function jsText(value) {
  return Array.isArray(value) ? `[${value.map(jsText).join(", ")}]` : JSON.stringify(value);
}

/** What the `@default` tag of an option says: the value, the batch preset's when it differs. */
export function defaultTag(option) {
  if (option.default === null) return `undefined (${option.whenUnset})`;
  const batch = "batchDefault" in option ? ` (batch: ${jsText(option.batchDefault)})` : "";
  return `${jsText(option.default)}${batch}`;
}

/** `text` as JSDoc lines of at most `width` characters, each starting with `prefix`. */
function wrap(text, prefix, width = 100) {
  const lines = [];
  let line = prefix;
  for (const word of text.split(" ")) {
    if (line.length + word.length + 1 > width && line !== prefix) {
      lines.push(line);
      line = prefix;
    }
    line += (line === prefix ? "" : " ") + word;
  }
  lines.push(line);
  return lines.join("\n");
}

export function optionsDts({ fetchTile }) {
  const members = fetchTile.map((o) => `  /**\n${wrap(o.doc, "   * ")}\n   * @default ${defaultTag(o)}\n   */\n  ${o.name}?: ${o.type};`);
  return `// Written by scripts/options-from-registry.mjs from src/options/registry.rs: edit the registry.
import type { RetryInfo } from "../index.js";

/** The option names fetchTile takes, in the order the documentation lists them. */
export declare const FETCH_TILE_OPTIONS: readonly string[];

/** The options of {@link fetchTile}. Every field is optional; \`undefined\` and \`null\` mean "not given". */
export interface FetchTileOptions {
${members.join("\n")}
}
`;
}

export function optionsJs({ fetchTile }) {
  return `// Written by scripts/options-from-registry.mjs from src/options/registry.rs: edit the registry.
/** The option names fetchTile takes, in the order the documentation lists them. */
export const FETCH_TILE_OPTIONS = Object.freeze(${JSON.stringify(fetchTile.map((o) => o.name))});
`;
}

const cell = (text) => text.replaceAll("|", "\\|");

/** The options table of docs/reference.md, markers included. */
export function optionsTable({ fetchTile }) {
  const rows = fetchTile.map((o) => {
    const shown = o.default === null ? o.whenUnset : `\`${jsText(o.default)}\`${"batchDefault" in o ? ` (batch \`${jsText(o.batchDefault)}\`)` : ""}`;
    return `| \`${o.name}\` | \`${cell(o.type)}\` | ${cell(shown)} | ${cell(o.doc)} |`;
  });
  return [BEGIN, "| option | type | default | meaning |", "| --- | --- | --- | --- |", ...rows, END].join("\n");
}

/** docs/reference.md with its options table written from `registry`. */
export function referenceWithTable(text, registry) {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`docs/reference.md: the markers ${BEGIN} … ${END} are missing`);
  return text.slice(0, start) + optionsTable(registry) + text.slice(end + END.length);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const registry = readRegistry();
  const reference = fs.readFileSync(REFERENCE, "utf8");
  const current = referenceWithTable(reference, registry);
  if (process.argv.includes("--check")) {
    if (current !== reference) {
      console.error("docs/reference.md: the options table is not the registry's; run node scripts/options-from-registry.mjs");
      process.exit(1);
    }
  } else {
    fs.mkdirSync(path.join(ROOT, "pkg/gen"), { recursive: true });
    fs.writeFileSync(path.join(ROOT, "pkg/gen/options.d.ts"), optionsDts(registry));
    fs.writeFileSync(path.join(ROOT, "pkg/gen/options.js"), optionsJs(registry));
    if (current !== reference) fs.writeFileSync(REFERENCE, current);
  }
}
