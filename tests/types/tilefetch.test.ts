// Type tests of pkg/*.d.ts, checked by `tsc -p tests/types` (in scripts/test.sh): what a user's
// code may write compiles, and each `@ts-expect-error` line must fail to (tsc reports an unused
// one), so a declaration that loosens or drifts is caught.
import { fetchTile, stats, TileClient, TileError } from "tilefetch";
import type { FetchTileOptions, Tile, TileErrorKind } from "tilefetch";
import { createTileLayer, createWmsLayer, routeTileLayer } from "tilefetch/leaflet";
import { createProtocol } from "tilefetch/maplibre";
import { routeImagery } from "tilefetch/cesium";
import { createGetTileData } from "tilefetch/deckgl";
import { createTileHandler, UpstreamGate } from "tilefetch/worker";

async function calls(signal: AbortSignal): Promise<void> {
  const tile: Tile = await fetchTile("https://t.example/1/0/0.png", { signal, deadlineMs: 6000, retryOn: [503], headers: { "User-Agent": "app/1" } });
  const bytes: Uint8Array = tile.data;
  const type: string | null = tile.contentType;
  const attempts: number = tile.attempts;
  void [bytes, type, attempts];
  await fetchTile(["https://a.example/1/0/0.png", "https://b.example/1/0/0.png"]);
  const client = new TileClient({ maxConcurrent: 8, hosts: { "t.example": { maxConcurrent: 2 } } });
  await client.fetchTile("https://{s}.t.example/1/0/0.png", { subdomains: ["a", "b"], preset: "batch" });
  const perHost = client.stats()["t.example"];
  const requests: number = perHost.requests;
  const settings = client.hostSettings("t.example");
  const deadline: number | undefined = settings?.deadlineMs;
  void [requests, stats(), deadline];
  client.free();

  // @ts-expect-error deadlineMs is a number
  await fetchTile("https://t.example/1/0/0.png", { deadlineMs: "6000" });
  // @ts-expect-error no such option
  await fetchTile("https://t.example/1/0/0.png", { deadline: 6000 });
  // @ts-expect-error a URL, not a number
  await fetchTile(42);
}

function errors(e: unknown): string | undefined {
  if (!(e instanceof TileError)) return undefined;
  const kind: TileErrorKind = e.kind;
  const code: string | undefined = e.exceptionCode;
  const text: string | undefined = e.exceptionText;
  const status: number | undefined = e.status;
  // @ts-expect-error not a kind
  const wrong: TileErrorKind = "exception";
  void [kind, status, wrong];
  return code ?? text;
}

const options: FetchTileOptions = { accept: "image/*", maxAgeS: 3600, jitter: "full" };
// @ts-expect-error not a jitter
const badJitter: FetchTileOptions = { jitter: "random" };
// The adapters of the other engines: a provider comes back as itself; parse sets the tile data's type.
declare const Cesium: { ImageryProvider: unknown; RequestScheduler: unknown; Resource: unknown };
const provider = routeImagery(Cesium, { requestImage: (_x: number, _y: number, _level: number) => undefined, name: "wms" }, { deadlineMs: 6000 });
const providerName: string = provider.name;
// @ts-expect-error a provider has requestImage
routeImagery(Cesium, { name: "none" });
const getVectorTile = createGetTileData({ parse: (bytes) => bytes.byteLength, client: new TileClient() });
async function deckTile(): Promise<number | null> {
  return getVectorTile({ index: { x: 0, y: 0, z: 0 }, url: "https://t.example/0/0/0.pbf" });
}
async function deckImage(): Promise<ImageBitmap | Uint8Array | null> {
  return createGetTileData({ deadlineMs: 6000 })({ index: { x: 0, y: 0, z: 0 }, url: "https://t.example/0/0/0.png" });
}
// @ts-expect-error parse takes the bytes, not a string
createGetTileData({ parse: (text: string) => text });
// @ts-expect-error with parse, the tile data is parse's (no ImageBitmap)
const notBitmap: Promise<ImageBitmap | null> = getVectorTile({ index: { x: 0, y: 0, z: 0 } });
void [providerName, deckTile, deckImage, notBitmap];
/** Leaflet's WMS layer and a plugin's layer class, with fetchTile options beside theirs. */
function leafletLayers(L: { TileLayer: { WMS: new (url: string, options?: object) => { addTo(map: unknown): unknown } } & Function }): void {
  createWmsLayer(L, "https://wms.example/service?", { layers: "roads", format: "image/png", transparent: true, deadlineMs: 8000 });
  const Routed = routeTileLayer(L, L.TileLayer.WMS);
  new Routed("https://wms.example/service?", { layers: "roads", hedge: "off" });
}

void [calls, errors, options, badJitter, createTileLayer, leafletLayers, createProtocol({ deadlineMs: 6000 }), createTileHandler, UpstreamGate];
