#!/usr/bin/env node
// Start-up: from `import` to the first fetchTile call having returned its promise (what holds
// back a module that imports tilefetch), and to that call having settled (the wasm module
// compiled and instantiated: in a browser the entry loads it in the background, so this is
// later), each in a fresh Node process and in a fresh Chromium page; the anchors' import times
// beside it (in Chromium, their minified bundles from bench/bundle.mjs). Repeated, alternating
// targets; medians. Writes bench/out/startup.json.
//
//   node bench/startup.mjs [--reps 10]
import fs from "node:fs";
import path from "node:path";
import { execFileSync } from "node:child_process";
import { pathToFileURL } from "node:url";
import { bundleAnchor, anchorClients, ROOT, OUT } from "./bundle.mjs";
import { CLIENTS } from "./clients/index.mjs";
import { median } from "./stats.mjs";
import { launchBrowser, startStaticServer } from "../tests/browser/helpers.mjs";

const i = process.argv.indexOf("--reps");
const reps = i >= 0 ? Number(process.argv[i + 1]) : 10;
const anchors = anchorClients().map((id) => CLIENTS[id].anchor);

// In the child: import, then (for tilefetch) make a first call, which must return a promise
// that rejects with kind "aborted" (a pre-aborted signal sends nothing): proof the call works.
const childSource = (spec, isTilefetch) => `
const t0 = performance.now();
const m = await import(${JSON.stringify(spec)});
let ms = performance.now() - t0;
${
  isTilefetch
    ? `
const first = m.fetchTile("http://127.0.0.1:9/0/0/0.png", { signal: AbortSignal.abort() });
ms = performance.now() - t0;
const kind = await first.then(() => "resolved", (e) => e.kind);
if (kind !== "aborted") throw new Error("first call: " + kind);`
    : ""
}
process.stdout.write(JSON.stringify({ ms, readyMs: performance.now() - t0 }));
`;

function nodeOnce(spec, isTilefetch) {
  const out = execFileSync(process.execPath, ["--input-type=module", "-e", childSource(spec, isTilefetch)], { cwd: ROOT, encoding: "utf8" });
  return JSON.parse(out);
}

const targets = [["tilefetch", pathToFileURL(path.join(ROOT, "pkg/node.js")).href, true], ...anchors.map((a) => [a, a, false])];
const node = Object.fromEntries(targets.map(([name]) => [name, []]));
for (let r = 0; r < reps; r++) for (const [name, spec, tf] of targets) node[name].push(nodeOnce(spec, tf));

for (const id of anchorClients()) await bundleAnchor(id);
const statics = await startStaticServer(ROOT, { allow: ["/pkg/", "/bench/"] });
const browser = await launchBrowser();
const chromium = Object.fromEntries(targets.map(([name]) => [name, []]));
try {
  const browserSpec = (name) => (name === "tilefetch" ? "/pkg/browser.js" : `/bench/out/anchors/${name}.min.js`);
  for (let r = 0; r < reps; r++) {
    for (const [name] of targets) {
      const context = await browser.newContext();
      const page = await context.newPage();
      await page.goto(`${statics.url}/bench/browser/page.html`);
      const ms = await page.evaluate(
        async ({ spec, isTilefetch }) => {
          const t0 = performance.now();
          const m = await import(spec);
          let ms = performance.now() - t0;
          if (isTilefetch) {
            const first = m.fetchTile("http://127.0.0.1:9/0/0/0.png", { signal: AbortSignal.abort() });
            ms = performance.now() - t0;
            const kind = await first.then(
              () => "resolved",
              (e) => e.kind,
            );
            if (kind !== "aborted") throw new Error(`first call: ${kind}`);
          }
          return { ms, readyMs: performance.now() - t0 };
        },
        { spec: browserSpec(name), isTilefetch: name === "tilefetch" },
      );
      chromium[name].push(ms);
      await context.close();
    }
  }
} finally {
  await browser.close();
  await statics.close();
}

const summary = (samples) =>
  Object.fromEntries(
    Object.entries(samples).map(([k, v]) => [k, { medianMs: median(v.map((x) => x.ms)), readyMedianMs: median(v.map((x) => x.readyMs)), samples: v }]),
  );
const result = { reps, node: summary(node), chromium: summary(chromium) };
fs.mkdirSync(OUT, { recursive: true });
fs.writeFileSync(path.join(OUT, "startup.json"), JSON.stringify(result, null, 1));
process.stderr.write(
  `startup (median ms): Node ${JSON.stringify(Object.fromEntries(Object.entries(result.node).map(([k, v]) => [k, +v.medianMs.toFixed(2)])))}; ` +
    `Chromium ${JSON.stringify(Object.fromEntries(Object.entries(result.chromium).map(([k, v]) => [k, +v.medianMs.toFixed(2)])))}\n`,
);
