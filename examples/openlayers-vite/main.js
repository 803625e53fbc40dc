import "ol/ol.css";
import OlMap from "ol/Map.js";
import View from "ol/View.js";
import TileLayer from "ol/layer/Tile.js";
import XYZ from "ol/source/XYZ.js";
import { createTileLoadFunction } from "tilefetch/openlayers";

// Your tile server's URL template; `?tiles=` in the page's address overrides it.
const tiles = new URLSearchParams(location.search).get("tiles") ?? "https://tile.openstreetmap.org/{z}/{x}/{y}.png";

const map = new OlMap({ target: "map", view: new View({ center: [0, 0], zoom: 2 }) });
const source = new XYZ({ url: tiles, attributions: "© OpenStreetMap contributors" });
// `map` lets the loader abort tiles the view no longer wants.
source.setTileLoadFunction(createTileLoadFunction({ map }));
map.addLayer(new TileLayer({ source }));
