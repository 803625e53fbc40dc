// The User-Agent tilefetch sends where a script may set one (here Node; the workerd proxy test
// checks workerd's): the library's name, version and documentation by default, as OpenStreetMap's
// tile usage policy asks of libraries, and the caller's own when `headers` has one. The loopback
// fault server records each request's headers.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import { fetchTile, TileClient } from "../../pkg/node.js";
import { startFaultServer } from "../server/fault-server.mjs";
import { tileUrl } from "./helpers.mjs";

const pkg = JSON.parse(fs.readFileSync(new URL("../../pkg/package.json", import.meta.url), "utf8"));
const cargo = fs.readFileSync(new URL("../../Cargo.toml", import.meta.url), "utf8");
const EXPECTED = `tilefetch/${pkg.version} (+${pkg.homepage})`;

let srv;
before(async () => {
  srv = await startFaultServer({ seed: 1 });
});
after(async () => {
  await srv?.close();
});

const sentBy = (run) => srv.log.filter((e) => e.key.startsWith(`${run}/`)).map((e) => e.headers["user-agent"]);

test("the package and the crate name one version and one homepage (the User-Agent's parts)", () => {
  const field = (name) => cargo.match(new RegExp(`^${name} = "([^"]+)"`, "m"))?.[1];
  assert.equal(field("version"), pkg.version);
  assert.equal(field("homepage"), pkg.homepage);
  assert.match(pkg.homepage, /^https:\/\//);
});

test("by default every request names tilefetch, its version and its docs", async () => {
  await fetchTile(tileUrl(srv, "ua-default", [1, 0, 0]));
  await new TileClient().fetchTile(tileUrl(srv, "ua-default", [1, 0, 1]), { accept: "image/png" });
  // With other headers of the caller's, and on a retried request, too.
  await fetchTile(tileUrl(srv, "ua-default", [1, 1, 0], { f: "503", n: 1 }), { headers: { "x-app": "1" }, baseDelayMs: 1 });
  assert.deepEqual(sentBy("ua-default"), [EXPECTED, EXPECTED, EXPECTED, EXPECTED]);
});

test("a User-Agent in the caller's headers replaces the default, in any spelling", async () => {
  await fetchTile(tileUrl(srv, "ua-own", [1, 0, 0]), { headers: { "User-Agent": "my-map/2.0 (+https://example.org)" } });
  await new TileClient({ headers: [["user-agent", "my-map/3.0"]] }).fetchTile(tileUrl(srv, "ua-own", [1, 0, 1]));
  assert.deepEqual(sentBy("ua-own"), ["my-map/2.0 (+https://example.org)", "my-map/3.0"]);
});
