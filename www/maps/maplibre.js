// MapLibre GL: two maps kept on the same view; the left map's raster source uses the
// `tilefetch://` protocol (createProtocol with the shared client), the right one plain URLs.
import "maplibre-gl/dist/maplibre-gl.css";
import maplibregl from "maplibre-gl";
import { createProtocol } from "tilefetch/maplibre";

const TILE_RE = /\/tiles\/(\d+)\/(\d+)\/(\d+)\.png/;

export async function createMaps({ tfEl, plainEl, client, templates, track }) {
  const action = createProtocol({ client });
  maplibregl.addProtocol("tilefetch", async (params, abortController) => {
    const m = TILE_RE.exec(params.url);
    const key = m ? `${m[1]}/${m[2]}/${m[3]}` : params.url;
    track("tilefetch", key, "loading");
    try {
      const response = await action(params, abortController);
      track("tilefetch", key, "loaded");
      return response;
    } catch (e) {
      track("tilefetch", key, e.name === "AbortError" ? "aborted" : "failed");
      throw e;
    }
  });
  const style = (tiles) => ({
    version: 8,
    sources: { t: { type: "raster", tiles: [tiles], tileSize: 256 } },
    layers: [{ id: "t", type: "raster", source: "t", paint: { "raster-fade-duration": 0 } }],
  });
  // MapLibre's zoom z shows 256-px raster tiles of zoom z + 1: zoom 2 here = zoom 3 elsewhere.
  const opts = {
    center: [0, 0],
    zoom: 2,
    attributionControl: false,
    fadeDuration: 0,
    renderWorldCopies: false,
    canvasContextAttributes: { preserveDrawingBuffer: true },
  };
  const tfMap = new maplibregl.Map({ ...opts, container: tfEl, style: style(`tilefetch://${templates.tilefetch}`) });
  const plainMap = new maplibregl.Map({ ...opts, container: plainEl, style: style(templates.plain) });
  tfMap.addControl(new maplibregl.NavigationControl({ showCompass: false }));
  plainMap.addControl(new maplibregl.NavigationControl({ showCompass: false }));
  tfMap.on("error", () => {}); // give-ups are counted by the protocol wrapper; keep the console quiet

  // The plain map: MapLibre's own tile events.
  const key = (tile) => {
    const c = tile?.tileID?.canonical;
    return c ? `${c.z}/${c.x}/${c.y}` : null;
  };
  plainMap.on("dataloading", (e) => key(e.tile) && track("plain", key(e.tile), "loading"));
  plainMap.on("data", (e) => e.dataType === "source" && key(e.tile) && track("plain", key(e.tile), "loaded"));
  plainMap.on("error", (e) => key(e.tile) && track("plain", key(e.tile), "failed"));

  let syncing = false;
  const follow = (from, to) =>
    from.on("move", () => {
      if (syncing) return;
      syncing = true;
      to.jumpTo({ center: from.getCenter(), zoom: from.getZoom(), bearing: from.getBearing(), pitch: from.getPitch() });
      syncing = false;
    });
  follow(tfMap, plainMap);
  follow(plainMap, tfMap);
  return {
    reload(t) {
      tfMap.getSource("t").setTiles([`tilefetch://${t.tilefetch}`]);
      plainMap.getSource("t").setTiles([t.plain]);
    },
  };
}
