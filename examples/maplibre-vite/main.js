import "maplibre-gl/dist/maplibre-gl.css";
import * as maplibregl from "maplibre-gl";
import workerUrl from "maplibre-gl/dist/maplibre-gl-worker.mjs?worker&url";
import { createProtocol } from "tilefetch/maplibre";

// Under a bundler MapLibre 6 is told where its worker is (its install guide's line for Vite).
maplibregl.setWorkerUrl(workerUrl);
maplibregl.addProtocol("tilefetch", createProtocol());

// Your tile server's URL template; `?tiles=` in the page's address overrides it.
const tiles = new URLSearchParams(location.search).get("tiles") ?? "https://tile.openstreetmap.org/{z}/{x}/{y}.png";

new maplibregl.Map({
  container: "map",
  center: [0, 0],
  zoom: 1,
  style: {
    version: 8,
    sources: {
      osm: { type: "raster", tileSize: 256, tiles: [`tilefetch://${tiles}`], attribution: "© OpenStreetMap contributors" },
    },
    layers: [{ id: "osm", type: "raster", source: "osm" }],
  },
});
