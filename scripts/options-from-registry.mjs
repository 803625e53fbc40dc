// Writes what the option registry (src/options/registry.rs) declares into the package and the
// docs, so an option is declared once: `pkg/gen/options.js` (the option names, which the
// adapters ask, and the edge gate's setting names), `pkg/gen/options.d.ts` (`FetchTileOptions`,
// `HostSettings`, `HostOptions` and `TileClientConfig`, each field with its type, documentation
// and `@default`), and the tables of docs/reference.md and docs/tile-client.md (between their
// `<!-- options … -->` markers). Run by scripts/build.sh; with `--check` (the test command's
// static checks) the docs are not written but checked (exit 1 when a table is not the registry's).
//
//   node scripts/options-from-registry.mjs [--check]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
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
  // "90 %" and "±20 %" stay on one line.
  for (const word of text.replaceAll(" %", "\u00a0%").split(" ")) {
    if (line.length + word.length + 1 > width && line !== prefix) {
      lines.push(line);
      line = prefix;
    }
    line += (line === prefix ? "" : " ") + word;
  }
  lines.push(line);
  return lines.join("\n").replaceAll("\u00a0", " ");
}

const member = (o, indent = "  ") =>
  `${indent}/**\n${wrap(o.doc, `${indent} * `)}\n${indent} * @default ${defaultTag(o)}\n${indent} */\n${indent}${o.name.split(".").pop()}?: ${o.type};`;

/** The host settings as TypeScript members: dotted names grouped into their object. */
function settingMembers(settings) {
  const out = [];
  const objects = new Map();
  for (const setting of settings) {
    const [object, key] = setting.name.includes(".") ? setting.name.split(".") : [null, setting.name];
    if (object === null) {
      out.push(member(setting));
    } else {
      if (!objects.has(object)) {
        objects.set(object, []);
        out.push(objects.get(object));
      }
      objects.get(object).push(member({ ...setting, name: key }, "    "));
    }
  }
  const names = [...objects.keys()];
  return out.map((m) => (Array.isArray(m) ? `  ${names[[...objects.values()].indexOf(m)]}?: {\n${m.join("\n")}\n  };` : m)).join("\n");
}

/** The option names of `scopes`, as a TypeScript union. */
const namesOf = (options, scopes) =>
  options
    .filter((o) => scopes.includes(o.scope))
    .map((o) => JSON.stringify(o.name))
    .join(" | ");

export function optionsDts({ fetchTile, hostSettings, clientSettings }) {
  return `// Written by scripts/options-from-registry.mjs from src/options/registry.rs: edit the registry.
import type { ByteRange, RetryInfo, TileEvent } from "../index.js";

/** The option names fetchTile takes, in the order the documentation lists them. */
export declare const FETCH_TILE_OPTIONS: readonly string[];
/** The names of the edge gate's settings, as the core reads them. */
export declare const GATE_KEYS: readonly string[];
/** The response fields a server states its rate limit in, lower-case, as the core parses them. */
export declare const RATE_LIMIT_FIELDS: readonly string[];

/** The options of {@link fetchTile}. Every field is optional; \`undefined\` and \`null\` mean "not given". */
export interface FetchTileOptions {
${fetchTile.map((o) => member(o)).join("\n")}
}

/** Settings a client applies per host: as defaults for every host, or in \`hosts\` for one. */
export interface HostSettings {
${settingMembers(hostSettings)}
}

/** One host's entry in \`hosts\`: the fetchTile options that may be set per host, and the host settings. */
export type HostOptions = Omit<FetchTileOptions, ${namesOf(fetchTile, ["call", "client"])}> & HostSettings;

/** A {@link TileClient}'s config: fetchTile options and host settings for every host, and per host. */
export interface TileClientConfig extends Omit<FetchTileOptions, ${namesOf(fetchTile, ["call"])}>, HostSettings {
${clientSettings.map((o) => member(o)).join("\n")}
}
`;
}

export function optionsJs({ fetchTile, gateKeys, rateLimitFields }) {
  return `// Written by scripts/options-from-registry.mjs from src/options/registry.rs: edit the registry.
/** The option names fetchTile takes, in the order the documentation lists them. */
export const FETCH_TILE_OPTIONS = Object.freeze(${JSON.stringify(fetchTile.map((o) => o.name))});
/** The names of the edge gate's settings, as the core reads them. */
export const GATE_KEYS = Object.freeze(${JSON.stringify(gateKeys)});
/** The response fields a server states its rate limit in, lower-case, as the core parses them. */
export const RATE_LIMIT_FIELDS = Object.freeze(${JSON.stringify(rateLimitFields)});
`;
}

const cell = (text) => text.replaceAll("|", "\\|");

/** A Markdown table of declarations, markers included. */
function table(heading, declarations) {
  const rows = declarations.map((o) => {
    const shown = o.default === null ? o.whenUnset : `\`${jsText(o.default)}\`${"batchDefault" in o ? ` (batch \`${jsText(o.batchDefault)}\`)` : ""}`;
    return `| \`${o.name}\` | \`${cell(o.type)}\` | ${cell(shown)} | ${cell(o.doc)} |`;
  });
  return [BEGIN, `| ${heading} | type | default | meaning |`, "| --- | --- | --- | --- |", ...rows, END].join("\n");
}

/** The docs pages with tables written from the registry: path → the table. */
export function docTables(registry) {
  return {
    "docs/reference.md": table("option", registry.fetchTile),
    "docs/tile-client.md": table("setting (client-wide or per host)", [...registry.hostSettings, ...registry.clientSettings]),
  };
}

/** `text` (a docs page) with its table between the markers replaced by `tableText`. */
export function withTable(text, tableText, page = "the page") {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${page}: the markers ${BEGIN} … ${END} are missing`);
  return text.slice(0, start) + tableText + text.slice(end + END.length);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes("--check");
  const registry = readRegistry();
  fs.mkdirSync(path.join(ROOT, "pkg/gen"), { recursive: true });
  fs.writeFileSync(path.join(ROOT, "pkg/gen/options.d.ts"), optionsDts(registry));
  fs.writeFileSync(path.join(ROOT, "pkg/gen/options.js"), optionsJs(registry));
  const stale = [];
  for (const [page, tableText] of Object.entries(docTables(registry))) {
    const file = path.join(ROOT, page);
    const text = fs.readFileSync(file, "utf8");
    const current = withTable(text, tableText, page);
    if (current === text) continue;
    stale.push(page);
    if (!check) fs.writeFileSync(file, current);
  }
  if (check && stale.length) {
    console.error(`${stale.join(", ")}: the tables are not the registry's; run node scripts/options-from-registry.mjs and commit them`);
    process.exit(1);
  }
}
