// OpenLayers: two maps sharing one View; the left XYZ source loads through tilefetch
// (createTileLoadFunction with the shared client and `map`, so tiles leaving the view are aborted).
import "ol/ol.css";
import OlMap from "ol/Map.js";
import View from "ol/View.js";
import TileLayer from "ol/layer/Tile.js";
import XYZ from "ol/source/XYZ.js";
import { defaults as defaultControls } from "ol/control/defaults.js";
import { createTileLoadFunction } from "tilefetch/openlayers";

export async function createMaps({ tfEl, plainEl, client, templates, track }) {
  const view = new View({ center: [0, 0], zoom: 3 });
  const controls = () => defaultControls({ attribution: false, rotate: false });
  const tfSource = new XYZ({ url: templates.tilefetch, transition: 0 });
  const plainSource = new XYZ({ url: templates.plain, transition: 0, crossOrigin: "anonymous" });
  const tfMap = new OlMap({ target: tfEl, view, controls: controls(), layers: [new TileLayer({ source: tfSource, preload: 0 })] });
  const plainMap = new OlMap({ target: plainEl, view, controls: controls(), layers: [new TileLayer({ source: plainSource, preload: 0 })] });
  tfSource.setTileLoadFunction(createTileLoadFunction({ client, map: tfMap }));

  for (const [side, source] of [
    ["tilefetch", tfSource],
    ["plain", plainSource],
  ]) {
    const key = (tile) => tile.getTileCoord().join("/");
    source.on("tileloadstart", (e) => track(side, key(e.tile), "loading"));
    source.on("tileloadend", (e) => track(side, key(e.tile), "loaded"));
    source.on("tileloaderror", (e) => track(side, key(e.tile), e.tile.error?.kind === "aborted" ? "aborted" : "failed"));
  }
  void plainMap;
  return {
    reload(t) {
      tfSource.setUrl(t.tilefetch);
      plainSource.setUrl(t.plain);
      tfSource.refresh();
      plainSource.refresh();
    },
  };
}
