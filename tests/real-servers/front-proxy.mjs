// A counting reverse proxy in front of a real server, for the real-server tests.
//
//   import { startFrontProxy } from "./front-proxy.mjs";
//   const front = await startFrontProxy(mapproxy.url);
//   await fetch(`${front.url}/as200/wmts/osm/webmercator/0/0/99.png`);   // upstream 400 -> 200
//   front.count("/as200/wmts/");   front.requests;   front.reset();   await front.stop();
//
// Why: the real servers cannot say how often they were asked, and they send their exception
// reports with their own statuses only. The proxy records every request it receives (so a test
// can assert "exactly 1 request" or "retried") and, for paths under /as200/, strips that prefix,
// forwards the rest and answers the upstream's headers and body with status 200, the way many
// other servers send exception reports.
//
// Under /fail-first/, the first request for each URL (the rest of it, forwarded as above) fails
// as a busy or flaky server fails, without reaching the upstream: 503 (no Retry-After, with
// `Access-Control-Allow-Origin: *`) for one URL, a connection reset for the next, in turn; its later requests are forwarded. A map's own
// loader, which does not retry, shows no tile of such a server.
//
// requests[i] = { method, url (path+query as received, /as200/ and /fail-first/ included),
//   upstreamUrl (what was forwarded), headers (as received), as200, failed ("503", "reset" or
//   null), t (ms since start), status (sent to the client; null until the upstream answered),
//   upstreamStatus, clientGone (true when the client left before the answer was sent) }.

import http from "node:http";
import { listenOnLoopback } from "./loopback.mjs";

const AS200 = "/as200/";
const FAIL_FIRST = "/fail-first/";
// Hop-by-hop headers (RFC 9110 7.6.1) belong to one connection and are not forwarded.
const HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
  "proxy-authorization",
  "proxy-authenticate",
]);

export async function startFrontProxy(upstreamUrl) {
  const upstream = new URL(upstreamUrl);
  const agent = new http.Agent({ keepAlive: true });
  const requests = [];
  const t0 = performance.now();

  const failedOnce = new Map(); // /fail-first/ URL -> how it failed
  const server = http.createServer((req, res) => {
    const as200 = req.url.startsWith(AS200);
    const failFirst = req.url.startsWith(FAIL_FIRST);
    const forwardPath = as200 ? req.url.slice(AS200.length - 1) : failFirst ? req.url.slice(FAIL_FIRST.length - 1) : req.url;
    const failed = failFirst && !failedOnce.has(req.url) ? (failedOnce.size % 2 === 0 ? "503" : "reset") : null;
    const entry = {
      method: req.method,
      url: req.url,
      upstreamUrl: forwardPath,
      headers: { ...req.headers },
      as200,
      failed,
      t: performance.now() - t0,
      status: null,
      upstreamStatus: null,
      clientGone: false,
    };
    requests.push(entry);
    if (failed) {
      failedOnce.set(req.url, failed);
      if (failed === "reset") return req.socket.destroy();
      entry.status = 503;
      // With CORS headers, as MapProxy sends them on every answer: a refusal the page may read.
      const cors = req.headers.origin ? { "Access-Control-Allow-Origin": "*" } : {};
      res.writeHead(503, { "Content-Type": "text/plain; charset=utf-8", ...cors });
      return res.end("busy\n");
    }

    const headers = {};
    for (const [k, v] of Object.entries(req.headers)) if (!HOP.has(k)) headers[k] = v;
    headers.host = upstream.host;
    // The upstream's own base path (if any) is kept in front of the forwarded path.
    const base = upstream.pathname.replace(/\/$/, "");
    const up = http.request({ host: upstream.hostname, port: upstream.port, method: req.method, path: base + forwardPath, headers, agent }, (upRes) => {
      entry.upstreamStatus = upRes.statusCode;
      entry.status = as200 ? 200 : upRes.statusCode;
      // rawHeaders keep the upstream's spelling and repeated headers; only hop-by-hop ones go.
      const out = [];
      for (let i = 0; i < upRes.rawHeaders.length; i += 2) {
        if (!HOP.has(upRes.rawHeaders[i].toLowerCase())) out.push(upRes.rawHeaders[i], upRes.rawHeaders[i + 1]);
      }
      res.writeHead(entry.status, as200 ? "OK" : upRes.statusMessage, out);
      upRes.pipe(res);
    });
    up.on("error", (e) => {
      // Not something a real server sends: make it loud rather than plausible.
      entry.status = 502;
      if (res.headersSent) return res.destroy();
      res.writeHead(502, { "Content-Type": "text/plain; charset=utf-8" });
      res.end(`front proxy: upstream ${upstream.host} failed: ${e.message}\n`);
    });
    // A client that gives up (a timeout, an abort) ends the upstream request too.
    res.on("close", () => {
      if (res.writableFinished) return;
      entry.clientGone = true;
      up.destroy();
    });
    req.pipe(up);
  });

  const url = await listenOnLoopback(server);

  return {
    url,
    requests,
    /** Requests received whose url starts with the string, or for which the predicate is true. */
    count(prefixOrPredicate = () => true) {
      const match = typeof prefixOrPredicate === "function" ? prefixOrPredicate : (r) => r.url.startsWith(prefixOrPredicate);
      return requests.filter(match).length;
    },
    reset() {
      requests.length = 0;
    },
    stop: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        agent.destroy();
      }),
  };
}
