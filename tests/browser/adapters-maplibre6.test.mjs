// tilefetch/maplibre in headless Chromium with the real MapLibre GL JS 6 from npm (the
// \`maplibre-gl-6\` alias of maplibre-gl@6; ES modules only, its worker handed over with
// setWorkerUrl): the same tests as on MapLibre GL 5.
import { maplibreTests } from "./adapters-maplibre-suite.mjs";

maplibreTests("maplibre6", 6);
