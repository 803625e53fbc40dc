// MapServer 8 behind a tiny CGI host, for the real-server tests.
//
//   import { startMapServer } from "./mapserver/cgi.mjs";
//   const ms = await startMapServer();          // { mapfile } defaults to tiles.map beside this
//   await fetch(`${ms.url}/cgi-bin/mapserv?SERVICE=WMS&REQUEST=GetCapabilities`);
//   await ms.stop();
//
// A node:http server on 127.0.0.1 (port 0) runs one `mapserv` process per request, the way
// Apache's mod_cgi would, and answers with the CGI's own headers: `Status:` becomes the status
// line (200 when absent, as CGI says), every other header is passed on. Any path runs mapserv
// (SCRIPT_NAME is the request's path), so the cases can use the familiar /cgi-bin/mapserv.
// The mapfile comes from MS_MAPFILE, never from the query, and MapServer 8's mandatory config
// file is mapserver.conf beside this module.

import http from "node:http";
import { spawn, execFileSync } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { listenOnLoopback } from "../loopback.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const REQUEST_TIMEOUT_MS = 30_000;

/** The mapserv CGI binary: $MAPSERV, Debian's /usr/lib/cgi-bin/mapserv, or mapserv on PATH. */
export function findMapserv() {
  const candidates = [process.env.MAPSERV, "/usr/lib/cgi-bin/mapserv"].filter(Boolean);
  try {
    candidates.push(execFileSync("sh", ["-c", "command -v mapserv"], { encoding: "utf8" }).trim());
  } catch {
    // not on PATH either
  }
  for (const c of candidates) {
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // try the next one
    }
  }
  throw new Error(
    "mapserv not found (looked at $MAPSERV, /usr/lib/cgi-bin/mapserv and PATH): " +
      "install it with `apt-get install -y cgi-mapserver mapserver-bin` (see tests/real-servers/install.sh)",
  );
}

/** Splits CGI output into { status, headers: [[name, value]...], body }. */
function parseCgiOutput(out) {
  // The header block ends at the first empty line; MapServer writes \r\n, other CGIs \n.
  let end = out.indexOf("\r\n\r\n");
  let sep = 4;
  const lf = out.indexOf("\n\n");
  if (end < 0 || (lf >= 0 && lf < end)) [end, sep] = [lf, 2];
  if (end < 0) return null;
  let status = 200;
  const headers = [];
  for (const line of out.subarray(0, end).toString("latin1").split(/\r?\n/)) {
    const i = line.indexOf(":");
    if (i <= 0) return null;
    const name = line.slice(0, i).trim();
    const value = line.slice(i + 1).trim();
    if (name.toLowerCase() === "status") status = parseInt(value, 10) || 500;
    // The host sets Content-Length itself, from the body it really got.
    else if (name.toLowerCase() !== "content-length") headers.push([name, value]);
  }
  // CGI/1.1: a Location header without Status is a redirect.
  if (status === 200 && headers.some(([n]) => n.toLowerCase() === "location")) status = 302;
  return { status, headers, body: out.subarray(end + sep) };
}

export async function startMapServer({ mapfile = path.join(here, "tiles.map") } = {}) {
  const mapserv = findMapserv();
  const config = path.join(here, "mapserver.conf");

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://127.0.0.1");
    const { port } = server.address();
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      GATEWAY_INTERFACE: "CGI/1.1",
      SERVER_SOFTWARE: "tilefetch-cgi-host",
      SERVER_PROTOCOL: `HTTP/${req.httpVersion}`,
      SERVER_NAME: "127.0.0.1",
      SERVER_PORT: String(port),
      REQUEST_METHOD: req.method,
      SCRIPT_NAME: url.pathname,
      QUERY_STRING: url.search.slice(1),
      REMOTE_ADDR: req.socket.remoteAddress ?? "127.0.0.1",
      MAPSERVER_CONFIG_FILE: config,
      MS_MAPFILE: mapfile,
    };
    if (req.headers["content-type"]) env.CONTENT_TYPE = req.headers["content-type"];
    if (req.headers["content-length"]) env.CONTENT_LENGTH = req.headers["content-length"];
    for (const [k, v] of Object.entries(req.headers)) {
      env[`HTTP_${k.toUpperCase().replace(/-/g, "_")}`] = Array.isArray(v) ? v.join(", ") : v;
    }
    for (const k of ["PROJ_DATA", "PROJ_LIB"]) if (process.env[k]) env[k] = process.env[k];

    const child = spawn(mapserv, [], { env, stdio: ["pipe", "pipe", "pipe"] });
    const out = [];
    const err = [];
    child.stdout.on("data", (d) => out.push(d));
    child.stderr.on("data", (d) => err.push(d));
    req.pipe(child.stdin);
    child.stdin.on("error", () => {}); // mapserv may exit before reading a POST body
    const timer = setTimeout(() => child.kill("SIGKILL"), REQUEST_TIMEOUT_MS);
    // A client that goes away (a test's timeout/abort) ends the CGI too.
    res.on("close", () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    });

    child.on("error", (e) => fail(`spawn ${mapserv}: ${e.message}`));
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      const parsed = parseCgiOutput(Buffer.concat(out));
      if (!parsed) {
        const why = signal ? `killed by ${signal}` : `exit ${code}`;
        return fail(`mapserv gave no CGI headers (${why}): ${Buffer.concat(err).toString().slice(0, 500)}`);
      }
      if (res.destroyed) return;
      res.writeHead(parsed.status, [...parsed.headers.flat(), "Content-Length", String(parsed.body.length)]);
      res.end(req.method === "HEAD" ? undefined : parsed.body);
    });

    // What a web server says when its CGI breaks: 502 text/plain (not a MapServer answer).
    function fail(message) {
      clearTimeout(timer);
      if (res.headersSent || res.destroyed) return;
      res.writeHead(502, { "Content-Type": "text/plain; charset=utf-8" });
      res.end(`cgi host: ${message}\n`);
    }
  });

  const url = await listenOnLoopback(server);
  return {
    url,
    mapserv,
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
