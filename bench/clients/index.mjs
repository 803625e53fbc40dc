// Every client of the benchmarks, in the order of the tables: baselines, anchors, tilefetch.
// Each module exports `label`, `anchor` (the npm package it measures, or null), `config` (the
// retry configuration, as its docs recommend) and `create({ tilefetch })` -> `{ get(url, signal)
// -> Promise<Uint8Array>, close?() }`.
import * as rawFetch from "./raw-fetch.mjs";
import * as plainWrapper from "./plain-wrapper.mjs";
import * as naiveRetry from "./naive-retry.mjs";
import * as ky from "./ky.mjs";
import * as pRetry from "./p-retry.mjs";
import * as fetchRetry from "./fetch-retry.mjs";
import * as cockatiel from "./cockatiel.mjs";
import * as exponentialBackoff from "./exponential-backoff.mjs";
import * as tilefetchFetchTile from "./tilefetch-fetchtile.mjs";
import * as tilefetchClient from "./tilefetch-client.mjs";
import * as tilefetchClient16 from "./tilefetch-client16.mjs";
import * as tilefetchClient32 from "./tilefetch-client32.mjs";

export const CLIENTS = {
  "raw-fetch": rawFetch,
  "plain-wrapper": plainWrapper,
  "naive-retry": naiveRetry,
  ky,
  "p-retry": pRetry,
  "fetch-retry": fetchRetry,
  cockatiel,
  "exponential-backoff": exponentialBackoff,
  "tilefetch-fetchtile": tilefetchFetchTile,
  "tilefetch-client": tilefetchClient,
  "tilefetch-client16": tilefetchClient16,
  "tilefetch-client32": tilefetchClient32,
};

/** Clients that are tilefetch (the subject), as opposed to baselines and anchors. */
export const isTilefetch = (id) => CLIENTS[id]?.anchor === "tilefetch";
