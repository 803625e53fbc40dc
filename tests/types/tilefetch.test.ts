// Type tests of pkg/*.d.ts, checked by `tsc -p tests/types` (in scripts/test.sh): what a user's
// code may write compiles, and each `@ts-expect-error` line must fail to (tsc reports an unused
// one), so a declaration that loosens or drifts is caught.
import { fetchTile, stats, TileClient, TileError } from "tilefetch";
import type { FetchTileOptions, Tile, TileErrorKind } from "tilefetch";
import { createTileLayer } from "tilefetch/leaflet";
import { createProtocol } from "tilefetch/maplibre";
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
void [calls, errors, options, badJitter, createTileLayer, createProtocol({ deadlineMs: 6000 }), createTileHandler, UpstreamGate];
