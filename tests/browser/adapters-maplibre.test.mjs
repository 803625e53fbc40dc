// tilefetch/maplibre in headless Chromium (WebGL through SwiftShader) with the real MapLibre GL
// JS from npm: maplibregl.addProtocol("tilefetch", createProtocol(...)) and a raster source whose
// tiles are tilefetch://http://127.0.0.1:PORT/tile/{z}/{x}/{y}.png, against the fault server.
import { maplibreTests } from "./adapters-maplibre-suite.mjs";

maplibreTests("maplibre", 5);
