// Leaflet: two maps kept on the same view; the left layer is tilefetch's createTileLayer (the
// shared client; tiles leaving the view are aborted), the right one a plain L.tileLayer.
import "leaflet/dist/leaflet.css";
import L from "leaflet";
import { createTileLayer } from "tilefetch/leaflet";

export async function createMaps({ tfEl, plainEl, client, templates, track }) {
  const opts = { center: [0, 0], zoom: 3, attributionControl: false, fadeAnimation: false };
  const tfMap = L.map(tfEl, opts);
  const plainMap = L.map(plainEl, opts);
  const tfLayer = createTileLayer(L, templates.tilefetch, { client }).addTo(tfMap);
  const plainLayer = L.tileLayer(templates.plain, { crossOrigin: "anonymous" }).addTo(plainMap);

  for (const [side, layer] of [
    ["tilefetch", tfLayer],
    ["plain", plainLayer],
  ]) {
    const key = (e) => `${e.coords.z}/${e.coords.x}/${e.coords.y}`;
    layer.on("tileloadstart", (e) => track(side, key(e), "loading"));
    layer.on("tileload", (e) => track(side, key(e), "loaded"));
    layer.on("tileerror", (e) => track(side, key(e), "failed"));
    layer.on("tileabort", (e) => track(side, key(e), "aborted"));
  }
  // Keep the views together.
  let syncing = false;
  const follow = (from, to) =>
    from.on("move zoomend", () => {
      if (syncing) return;
      syncing = true;
      to.setView(from.getCenter(), from.getZoom(), { animate: false });
      syncing = false;
    });
  follow(tfMap, plainMap);
  follow(plainMap, tfMap);
  return {
    reload(t) {
      tfLayer.setUrl(t.tilefetch);
      plainLayer.setUrl(t.plain);
    },
  };
}
