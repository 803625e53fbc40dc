// What `npm publish` would upload: `npm pack` pkg/ once, then check the tarball as a user and the
// registry would see it: exactly the files meant to ship, every `exports` target among them, the
// texts (README, licences, changelog) with every link resolving inside the package, and the two
// package linters the ecosystem uses, publint and arethetypeswrong, on the tarball itself.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { execFile } from "node:child_process";
import { PKG, ROOT, packTarball, sh } from "../packed.mjs";
import { publishedReadme, relativeLinks } from "../../scripts/package-docs.mjs";

// What is meant to ship. A file added to the package is added here, on purpose.
const MEANT_TO_SHIP = [
  "package.json",
  "README.md",
  "CHANGELOG.md",
  "LICENSE-MIT",
  "LICENSE-APACHE",
  "docs/edge-proxy.md",
  "docs/map-libraries.md",
  "docs/reference.md",
  "docs/tile-client.md",
  "docs/usage.md",
  "index.d.ts",
  "browser.js",
  "node.js",
  "workerd.js",
  "openlayers.js",
  "openlayers.d.ts",
  "leaflet.js",
  "leaflet.d.ts",
  "maplibre.js",
  "maplibre.d.ts",
  "cesium.js",
  "cesium.d.ts",
  "deckgl.js",
  "deckgl.d.ts",
  "pmtiles.js",
  "pmtiles.d.ts",
  "adapter-options.js",
  "without-cors.js",
  "decode.js",
  "worker.js",
  "worker.d.ts",
  "worker/cache.js",
  "worker/config.js",
  "worker/gate.js",
  "worker/gated-fetch.js",
  "worker/guard.js",
  "worker/redirects.js",
  "worker/respond.js",
  "worker/route.js",
  "worker/signal.js",
  "worker/upstream.js",
  "gen/options.js",
  "gen/options.d.ts",
  "gen/tilefetch.js",
  "gen/tilefetch_bg.wasm",
  "gen/tilefetch_edge.js",
  "gen/tilefetch_edge_bg.wasm",
];

let tmp;
let packed; // { tarball, files }
before(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "tilefetch-contents-"));
  packed = await packTarball(tmp);
  await sh("tar", ["-xzf", packed.tarball, "-C", tmp]); // into tmp/package/
});
after(() => {
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const unpacked = (name) => path.join(tmp, "package", name);

test("the tarball holds exactly the files meant to ship", () => {
  assert.deepEqual([...packed.files].sort(), [...MEANT_TO_SHIP].sort());
  assert.deepEqual(
    packed.files.filter((f) => /\.map$|\.test\.|(^|\/)tests?\//.test(f)),
    [],
    "no source maps, no tests",
  );
});

test("every exports target, types and fallback field names a packed file", () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(PKG, "package.json"), "utf8"));
  const targets = [];
  const walk = (v) => (typeof v === "string" ? targets.push(v) : Object.values(v).forEach(walk));
  walk(manifest.exports);
  targets.push(manifest.types, manifest.main, manifest.module);
  assert.ok(targets.length > 10, `targets: ${targets.join(", ")}`);
  for (const t of targets) assert.ok(packed.files.includes(path.posix.normalize(t)), `${t} is in the tarball`);
});

test("README, licences and changelog: as published, every relative link resolves in the package", () => {
  const readme = fs.readFileSync(unpacked("README.md"), "utf8");
  assert.equal(readme, publishedReadme(fs.readFileSync(path.join(ROOT, "README.md"), "utf8")));
  assert.doesNotMatch(readme, /contributors -->|scripts\/test\.sh/, "no contributor block on the npm page");
  assert.match(readme, /npm install tilefetch/);
  for (const name of ["LICENSE-MIT", "LICENSE-APACHE", "CHANGELOG.md"]) {
    assert.equal(fs.readFileSync(unpacked(name), "utf8"), fs.readFileSync(path.join(ROOT, name), "utf8"), name);
  }
  assert.match(fs.readFileSync(unpacked("LICENSE-APACHE"), "utf8"), /Apache License\s+Version 2\.0, January 2004/);
  assert.match(fs.readFileSync(unpacked("LICENSE-MIT"), "utf8"), /Permission is hereby granted, free of charge/);
  const version = JSON.parse(fs.readFileSync(unpacked("package.json"), "utf8")).version;
  assert.match(fs.readFileSync(unpacked("CHANGELOG.md"), "utf8"), new RegExp(`^## ${version.replaceAll(".", "\\.")} `, "m"), "the current version's entry");
  for (const file of packed.files.filter((f) => f.endsWith(".md"))) {
    for (const link of relativeLinks(fs.readFileSync(unpacked(file), "utf8"))) {
      const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), link));
      assert.ok(packed.files.includes(target), `${file} links to ${link}, which is not in the tarball`);
    }
  }
});

test("publint (strict) on the tarball: no message", async () => {
  const { stdout } = await sh(path.join(ROOT, "node_modules/.bin/publint"), ["--strict", packed.tarball]);
  assert.match(stdout, /All good!/, stdout);
});

test("arethetypeswrong on the tarball: no problem but the ESM-only note", async () => {
  // The esm-only profile passes a package whose only finding is that CommonJS must import() it.
  await sh(path.join(ROOT, "node_modules/.bin/attw"), ["--profile", "esm-only", packed.tarball]);
  // The strict profile (the default) exits 1 on that note: read its report, not its exit code.
  const stdout = await new Promise((resolve) =>
    execFile(path.join(ROOT, "node_modules/.bin/attw"), ["--format", "json", packed.tarball], { maxBuffer: 64 * 1024 * 1024 }, (_, out) => resolve(out)),
  );
  const problems = Object.values(JSON.parse(stdout).problems ?? {}).flat();
  assert.ok(problems.length > 0, "the ESM-only note is reported (the check sees the entries)");
  assert.deepEqual([...new Set(problems.map((p) => p.kind))], ["CJSResolvesToESM"], JSON.stringify(problems));
  assert.deepEqual([...new Set(problems.map((p) => p.entrypoint))].sort(), [
    ".",
    "./cesium",
    "./deckgl",
    "./leaflet",
    "./maplibre",
    "./openlayers",
    "./pmtiles",
    "./worker",
  ]);
});
