// tilefetch's fetchTile as it was when the "boundary" issue was filed (bench/before/id.mjs),
// called as bench/clients/tilefetch-fetchtile.mjs calls today's: `fetchTile(url, { signal })`.
// Node only; built by bench/before/build.sh.
import { pathToFileURL } from "node:url";
import { BEFORE_LABEL, BEFORE_PKG } from "./id.mjs";

export const label = BEFORE_LABEL;
export const anchor = null;
export const config = "fetchTile(url, { signal }) of the module at the boundary issue's start";

const before = await import(pathToFileURL(BEFORE_PKG).href);

export function create() {
  return {
    async get(url, signal) {
      return (await before.fetchTile(url, { signal })).data;
    },
  };
}
