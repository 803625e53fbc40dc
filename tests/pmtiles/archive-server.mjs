// A loopback static-storage server for PMTiles archives, as S3, R2 or a CDN serves one: GET and
// HEAD with byte ranges (one `bytes=a-b` or `bytes=a-` range; 206 + Content-Range, 416 past the
// end), a strong ETag per archive version, CORS as the PMTiles documentation configures a bucket
// (any origin; Range and If-Match allowed; only ETag exposed, so a page does not see
// Content-Range). What no real storage does on demand comes from the query, seeded per request:
//
//   /NAME?run=R&seed=S&p503=P&preset=P&pcut=P&fail=N&ignore=1&weak=1&delay=MS
//
//   p503   a 503 text/plain "SlowDown"     preset  the connection destroyed before any answer
//   pcut   206 headers, half the body, then the connection destroyed (a body cut halfway)
//   fail   the first N requests of the run are 503     ignore  Range ignored: 200, the whole archive
//   weak   the ETag is weak (W/"…")                     delay   ms before each answer
//
//   const server = await startArchiveServer({ "a.pmtiles": bytes });
//   server.url; server.replace("a.pmtiles", bytes2) (new ETag); server.requests("R");
//   server.log (entries {run, range, status, fault}); await server.close();

import { createHash } from "node:crypto";
import http from "node:http";
import { prng } from "../server/fault-server.mjs";

/** The first and last byte of one `bytes=` range over `size` bytes, or null (no single range). */
export function parseRange(value, size) {
  const match = /^bytes=(\d+)-(\d*)$/.exec(value ?? "");
  if (!match) return null;
  const first = Number(match[1]);
  const last = match[2] === "" ? size - 1 : Math.min(Number(match[2]), size - 1);
  return { first, last };
}

export async function startArchiveServer(files, { host = "127.0.0.1" } = {}) {
  const archives = new Map();
  const put = (name, bytes) => {
    const version = (archives.get(name)?.version ?? 0) + 1;
    const hash = createHash("sha256").update(bytes).digest("hex").slice(0, 16);
    archives.set(name, { bytes: Buffer.from(bytes), version, etag: `"${hash}-${version}"` });
  };
  for (const [name, bytes] of Object.entries(files)) put(name, bytes);
  const counts = new Map();
  const log = [];
  const sockets = new Set();

  const server = http.createServer((req, res) => {
    const url = new URL(req.url, "http://loopback");
    const params = url.searchParams;
    res.setHeader("access-control-allow-origin", "*");
    res.setHeader("access-control-expose-headers", "ETag");
    if (req.method === "OPTIONS") {
      res.writeHead(204, {
        "access-control-allow-methods": "GET, HEAD",
        "access-control-allow-headers": "range, if-match",
        "access-control-max-age": "600",
      });
      res.end();
      return;
    }
    const archive = archives.get(url.pathname.slice(1));
    const run = params.get("run") ?? "";
    const n = (counts.get(run) ?? 0) + 1;
    counts.set(run, n);
    const entry = { run, n, range: req.headers.range ?? null, status: null, fault: "none" };
    log.push(entry);
    if (!archive) {
      entry.status = 404;
      res.writeHead(404, { "content-type": "application/xml" });
      res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
      return;
    }
    const chance = (stream) => prng(params.get("seed") ?? "1", run, n, stream);
    const answer = () => {
      if (n <= Number(params.get("fail") ?? 0) || chance("503") < Number(params.get("p503") ?? 0)) {
        entry.fault = "503";
        entry.status = 503;
        res.writeHead(503, { "content-type": "text/plain", "retry-after": "0" });
        res.end("SlowDown: please reduce your request rate");
        return;
      }
      if (chance("reset") < Number(params.get("preset") ?? 0)) {
        entry.fault = "reset";
        req.socket.destroy();
        return;
      }
      const { bytes, etag } = archive;
      const headers = {
        "content-type": "application/octet-stream",
        "accept-ranges": "bytes",
        etag: params.get("weak") === "1" ? `W/${etag}` : etag,
        "cache-control": "no-cache",
      };
      const range = params.get("ignore") === "1" ? null : parseRange(req.headers.range, bytes.length);
      if (range && range.first >= bytes.length) {
        entry.status = 416;
        res.writeHead(416, { ...headers, "content-range": `bytes */${bytes.length}` });
        res.end();
        return;
      }
      const body = range ? bytes.subarray(range.first, range.last + 1) : bytes;
      entry.status = range ? 206 : 200;
      res.writeHead(entry.status, {
        ...headers,
        "content-length": String(body.length),
        ...(range ? { "content-range": `bytes ${range.first}-${range.last}/${bytes.length}` } : {}),
      });
      if (req.method === "HEAD") {
        res.end();
      } else if (chance("cut") < Number(params.get("pcut") ?? 0) && body.length > 1) {
        entry.fault = "cut";
        res.write(body.subarray(0, body.length >> 1), () => req.socket.destroy());
      } else {
        res.end(body);
      }
    };
    const delay = Number(params.get("delay") ?? 0);
    if (delay > 0) setTimeout(answer, delay);
    else answer();
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise((resolve) => server.listen(0, host, resolve));
  return {
    url: `http://${host}:${server.address().port}`,
    log,
    /** Serves `bytes` as `name` from now on, with a new ETag. */
    replace: put,
    etag: (name) => archives.get(name)?.etag,
    /** Requests of `run` so far. */
    requests: (run) => counts.get(run) ?? 0,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
