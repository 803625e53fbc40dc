// Vite-builds a page that imports `tilefetch` and its adapters straight from pkg/ (no npm pack):
// the demo (www/serve.mjs) and the adapter tests build their pages the same way.
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Builds `input` (an .html under `root`) into `outDir`. */
export async function buildPage({ root, input, outDir }) {
  const { build } = await import("vite");
  await build({
    root,
    configFile: false,
    logLevel: "warn",
    resolve: {
      alias: [
        { find: /^tilefetch\/(openlayers|leaflet|maplibre|cesium|deckgl|pmtiles)$/, replacement: path.join(ROOT, "pkg/$1.js") },
        { find: /^tilefetch$/, replacement: path.join(ROOT, "pkg/browser.js") },
      ],
    },
    build: {
      target: "es2022",
      outDir,
      emptyOutDir: true,
      reportCompressedSize: false,
      chunkSizeWarningLimit: 4096,
      rollupOptions: { input },
    },
  });
}
