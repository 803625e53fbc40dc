// What the real servers send, case by case, and what fetchTile must make of it.
//
//   import { MAPPROXY_CASES, MAPSERVER_CASES, caseUrl } from "./cases.mjs";
//   for (const c of MAPPROXY_CASES) { const url = caseUrl(front.url, c); ... }
//
// Every case: { name, server: "mapproxy" | "mapserver", path (path+query relative to the
//   server's base URL), sends (what the server was seen to send: status, type = content-type,
//   report = the body is an OGC exception report, code = its first code or null, text = its
//   first exception text, whitespace-collapsed, entities decoded, at most 200 chars),
//   expect (the verdict), as200 / of (for the /as200/ variants, see below) }.
// `sends` is checked against the live servers by `node tests/real-servers/probe.mjs`, so a
// server upgrade that changes an answer shows up there first.
//
// expect.outcome:
//   "tile"   fetchTile resolves; the bytes equal a direct fetch of the same URL; 1 request.
//   "reject" fetchTile rejects after exactly 1 request with err.kind === expect.kind, and
//            err.exceptionCode / err.exceptionText === expect.exceptionCode / .exceptionText
//            when those are given (null = no code in the report); expect.status for "http".
//   "retry"  fetchTile retries until its deadline: err.kind === "deadline", ≥ 2 requests,
//            err.cause.kind === expect.causeKind, err.cause.exceptionCode === expect.exceptionCode
//            when given.
//
// /as200/ variants: for each case whose status is not 200 there is a copy whose path starts
// with /as200/, for the front proxy (front-proxy.mjs) to answer the same headers and body with
// status 200. A permanent code keeps its verdict; any other report on 200 is retried with a
// service-exception cause; a body with no report on 200 (plain text, JSON, TMS's own XML) is not
// a tile either: retried as invalid-response. MapServer sends everything with 200 already, so it
// has no variants. All paths (variants or not) work through the front proxy; the others also
// work against the server directly.

/** The URL of a case on a server (or on the front proxy in front of it). */
export function caseUrl(baseUrl, c) {
  return baseUrl.replace(/\/$/, "") + c.path;
}

// ---- small builders, so each case reads as "the valid request, with this changed" ----------

/** path?K=V&..., values left readable (`,` `:` `/` unescaped); a value of undefined drops K. */
function kvp(path, params) {
  const enc = (v) => encodeURIComponent(String(v)).replace(/%2C/g, ",").replace(/%3A/g, ":").replace(/%2F/g, "/");
  const q = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${k}=${enc(v)}`);
  return `${path}?${q.join("&")}`;
}
// The z=1 tile x=0 y=0 (north-west quarter) of web mercator, as a WMS BBOX.
const NW_QUARTER = "-20037508.34,0,0,20037508.34";
const getMap = (path, version, layers, o = {}) =>
  kvp(path, {
    SERVICE: "WMS",
    VERSION: version,
    REQUEST: "GetMap",
    LAYERS: layers,
    STYLES: "",
    [version === "1.3.0" ? "CRS" : "SRS"]: "EPSG:3857",
    BBOX: NW_QUARTER,
    WIDTH: 256,
    HEIGHT: 256,
    FORMAT: "image/png",
    ...o,
  });
const mpWms = (version, o) => getMap("/service", version, "osm", o);
const msWms = (version, o) => getMap("/cgi-bin/mapserv", version, "land,cities", o);
const mpWmtsKvp = (o = {}) =>
  kvp("/service", {
    SERVICE: "WMTS",
    VERSION: "1.0.0",
    REQUEST: "GetTile",
    LAYER: "osm",
    STYLE: "default",
    TILEMATRIXSET: "webmercator",
    FORMAT: "image/png",
    TILEMATRIX: 1,
    TILEROW: 0,
    TILECOL: 1,
    ...o,
  });

// ---- verdicts -------------------------------------------------------------------------------
const TILE = { outcome: "tile" };
const serviceException = (exceptionCode, exceptionText) => ({ outcome: "reject", kind: "service-exception", exceptionCode, exceptionText });
const http = (status, exceptionCode) => ({ outcome: "reject", kind: "http", status, ...(exceptionCode !== undefined && { exceptionCode }) });
const retry = (causeKind, exceptionCode) => ({ outcome: "retry", kind: "deadline", causeKind, ...(exceptionCode !== undefined && { exceptionCode }) });

const PNG = { status: 200, type: "image/png", report: false };
const JPEG = { status: 200, type: "image/jpeg", report: false };
const report = (status, type, code, text) => ({ status, type, report: true, code, text });
const plain = (status, type) => ({ status, type, report: false });

// MapProxy's exception bodies: WMS 1.1.1 application/vnd.ogc.se_xml and 1.3.0 text/xml, both
// with HTTP 500 (its XMLExceptionHandler default; codes do not change it); WMTS OWS reports
// with 400 for TileOutOfRange/InvalidParameterValue/MissingParameterValue and 500 for the rest;
// TMS its own <TileMapServerError><Message> XML with 404 (no OGC code); /tiles plain text 404;
// OGC API problem JSON. A Python exception inside MapProxy (WIDTH=abc) is 500 text/plain.
const SE111 = "application/vnd.ogc.se_xml";
const SE130 = "text/xml; charset=utf-8";
const BASE_MAPPROXY = [
  // -- valid tiles, one per protocol
  { name: "mapproxy wms 1.1.1 tile", path: mpWms("1.1.1"), sends: PNG, expect: TILE },
  { name: "mapproxy wms 1.3.0 tile", path: mpWms("1.3.0"), sends: PNG, expect: TILE },
  { name: "mapproxy wmts kvp tile", path: mpWmtsKvp(), sends: PNG, expect: TILE },
  { name: "mapproxy wmts rest tile", path: "/wmts/osm/webmercator/1/1/0.png", sends: PNG, expect: TILE },
  { name: "mapproxy tms tile", path: "/tms/1.0.0/osm/webmercator/1/1/0.png", sends: PNG, expect: TILE },
  // XYZ: the tms service's /tiles paths with `origin: nw` in mapproxy.yaml
  { name: "mapproxy xyz tile", path: "/tiles/osm/webmercator/1/1/0.png", sends: PNG, expect: TILE },
  // OGC API Tiles: .../{z}/{row}/{col}, format from f=
  { name: "mapproxy ogcapi tile", path: "/ogcapi/collections/osm/map/tiles/WebMercatorQuad/1/0/1?f=png", sends: PNG, expect: TILE },
  { name: "mapproxy ogcapi tile jpeg", path: "/ogcapi/collections/osm/map/tiles/WebMercatorQuad/1/0/1?f=jpeg", sends: JPEG, expect: TILE },
  // MapProxy ignores WMTS STYLE and accepts any WMS VERSION (answering as the nearest it has)
  { name: "mapproxy wmts kvp unknown style", path: mpWmtsKvp({ STYLE: "bogus" }), sends: PNG, expect: TILE },
  { name: "mapproxy wms unknown version", path: mpWms("1.2.7"), sends: PNG, expect: TILE },

  // -- unknown layer
  {
    name: "mapproxy wms 1.1.1 unknown layer",
    path: mpWms("1.1.1", { LAYERS: "nosuch" }),
    sends: report(500, SE111, "LayerNotDefined", "unknown layer: nosuch"),
    expect: serviceException("LayerNotDefined", "unknown layer: nosuch"),
  },
  {
    name: "mapproxy wms 1.3.0 unknown layer",
    path: mpWms("1.3.0", { LAYERS: "nosuch" }),
    sends: report(500, SE130, "LayerNotDefined", "unknown layer: nosuch"),
    expect: serviceException("LayerNotDefined", "unknown layer: nosuch"),
  },
  // WMTS says InvalidParameterValue, not LayerNotDefined
  {
    name: "mapproxy wmts kvp unknown layer",
    path: mpWmtsKvp({ LAYER: "nosuch" }),
    sends: report(400, "text/xml", "InvalidParameterValue", "unknown layer: nosuch"),
    expect: serviceException("InvalidParameterValue", "unknown layer: nosuch"),
  },
  {
    name: "mapproxy wmts rest unknown layer",
    path: "/wmts/nosuch/webmercator/1/1/0.png",
    sends: report(400, "text/xml", "InvalidParameterValue", "unknown layer: nosuch"),
    expect: serviceException("InvalidParameterValue", "unknown layer: nosuch"),
  },
  { name: "mapproxy tms unknown layer", path: "/tms/1.0.0/nosuch/webmercator/1/1/0.png", sends: plain(404, "text/xml; charset=utf-8"), expect: http(404) },
  { name: "mapproxy xyz unknown layer", path: "/tiles/nosuch/webmercator/1/1/0.png", sends: plain(404, "text/plain; charset=utf-8"), expect: http(404) },
  {
    name: "mapproxy ogcapi unknown collection",
    path: "/ogcapi/collections/nosuch/map/tiles/WebMercatorQuad/1/0/1?f=png",
    sends: plain(404, "application/json"),
    expect: http(404),
  },

  // -- unknown style, bad SRS / CRS, bad format
  {
    name: "mapproxy wms 1.1.1 unknown style",
    path: mpWms("1.1.1", { STYLES: "bogus" }),
    sends: report(500, SE111, "StyleNotDefined", "unsupported styles: bogus"),
    expect: serviceException("StyleNotDefined", "unsupported styles: bogus"),
  },
  {
    name: "mapproxy wms 1.1.1 bad srs",
    path: mpWms("1.1.1", { SRS: "EPSG:9999" }),
    sends: report(500, SE111, "InvalidSRS", "unsupported srs: EPSG:9999"),
    expect: serviceException("InvalidSRS", "unsupported srs: EPSG:9999"),
  },
  {
    name: "mapproxy wms 1.3.0 bad crs",
    path: mpWms("1.3.0", { CRS: "EPSG:9999" }),
    sends: report(500, SE130, "InvalidCRS", "unsupported crs: EPSG:9999"),
    expect: serviceException("InvalidCRS", "unsupported crs: EPSG:9999"),
  },
  {
    name: "mapproxy wms 1.1.1 bad format",
    path: mpWms("1.1.1", { FORMAT: "image/bogus" }),
    sends: report(500, SE111, "InvalidFormat", "unsupported image format: image/bogus"),
    expect: serviceException("InvalidFormat", "unsupported image format: image/bogus"),
  },
  {
    name: "mapproxy wms 1.3.0 bad format",
    path: mpWms("1.3.0", { FORMAT: "image/bogus" }),
    sends: report(500, SE130, "InvalidFormat", "unsupported image format: image/bogus"),
    expect: serviceException("InvalidFormat", "unsupported image format: image/bogus"),
  },
  {
    name: "mapproxy wmts kvp bad format",
    path: mpWmtsKvp({ FORMAT: "image/bogus" }),
    sends: report(400, "text/xml", "InvalidParameterValue", "invalid format (bogus). this tile set only supports (png)"),
    expect: serviceException("InvalidParameterValue", "invalid format (bogus). this tile set only supports (png)"),
  },
  {
    name: "mapproxy wmts rest bad format",
    path: "/wmts/osm/webmercator/1/1/0.jpeg",
    sends: report(400, "text/xml", "InvalidParameterValue", "invalid format (jpeg). this tile set only supports (png)"),
    expect: serviceException("InvalidParameterValue", "invalid format (jpeg). this tile set only supports (png)"),
  },
  { name: "mapproxy tms bad format", path: "/tms/1.0.0/osm/webmercator/1/1/0.jpeg", sends: plain(404, "text/xml; charset=utf-8"), expect: http(404) },
  {
    name: "mapproxy wmts kvp unknown tilematrixset",
    path: mpWmtsKvp({ TILEMATRIXSET: "nosuchgrid" }),
    sends: report(400, "text/xml", "InvalidParameterValue", "unknown tilematrixset: nosuchgrid"),
    expect: serviceException("InvalidParameterValue", "unknown tilematrixset: nosuchgrid"),
  },

  // -- out of range (row 9 of 2 at z=1; z=99 of 0..19)
  {
    name: "mapproxy wmts kvp row out of range",
    path: mpWmtsKvp({ TILEROW: 9 }),
    sends: report(400, "text/xml", "TileOutOfRange", "The requested tile is outside the bounding box of the tile map."),
    expect: serviceException("TileOutOfRange", "The requested tile is outside the bounding box of the tile map."),
  },
  {
    name: "mapproxy wmts rest zoom out of range",
    path: "/wmts/osm/webmercator/99/1/0.png",
    sends: report(400, "text/xml", "TileOutOfRange", "The requested tile is outside the bounding box of the tile map."),
    expect: serviceException("TileOutOfRange", "The requested tile is outside the bounding box of the tile map."),
  },
  { name: "mapproxy tms out of range", path: "/tms/1.0.0/osm/webmercator/1/1/9.png", sends: plain(404, "text/xml; charset=utf-8"), expect: http(404) },
  { name: "mapproxy xyz out of range", path: "/tiles/osm/webmercator/1/1/9.png", sends: plain(404, "text/plain; charset=utf-8"), expect: http(404) },
  {
    name: "mapproxy ogcapi out of range",
    path: "/ogcapi/collections/osm/map/tiles/WebMercatorQuad/1/9/1?f=png",
    sends: plain(400, "application/json"),
    expect: http(400),
  },

  // -- missing parameter: WMS has no code, WMTS says NoApplicableCode, both on 500
  {
    name: "mapproxy wms 1.1.1 missing bbox",
    path: mpWms("1.1.1", { BBOX: undefined }),
    sends: report(500, SE111, null, "missing parameters ['bbox']"),
    expect: retry("http", null),
  },
  {
    name: "mapproxy wmts kvp missing tilerow",
    path: mpWmtsKvp({ TILEROW: undefined }),
    sends: report(500, "text/xml", "NoApplicableCode", "missing parameters ['tilerow']"),
    expect: retry("http", "NoApplicableCode"),
  },
  {
    name: "mapproxy missing service",
    path: "/service",
    sends: report(400, "text/xml; charset=utf-8", "MissingParameterValue", "The service parameter is missing"),
    expect: serviceException("MissingParameterValue", "The service parameter is missing"),
  },

  // -- invalid parameter value
  { name: "mapproxy wms 1.1.1 width abc", path: mpWms("1.1.1", { WIDTH: "abc" }), sends: plain(500, "text/plain"), expect: retry("http") },
  { name: "mapproxy wmts kvp tilerow abc", path: mpWmtsKvp({ TILEROW: "abc" }), sends: plain(500, "text/plain"), expect: retry("http") },
  { name: "mapproxy wmts rest row abc", path: "/wmts/osm/webmercator/1/1/abc.png", sends: plain(500, "text/plain"), expect: retry("http") },
  {
    name: "mapproxy unknown service",
    path: "/service?SERVICE=BOGUS&REQUEST=GetMap",
    sends: report(400, "text/xml; charset=utf-8", "InvalidParameterValue", 'The value of the service parameter "bogus" is invalid'),
    expect: serviceException("InvalidParameterValue", 'The value of the service parameter "bogus" is invalid'),
  },

  // -- unknown REQUEST, huge size
  {
    name: "mapproxy wms 1.1.1 unknown request",
    path: mpWms("1.1.1", { REQUEST: "GetBogus" }),
    sends: report(500, SE111, null, "unknown WMS request type 'getbogus'"),
    expect: retry("http", null),
  },
  {
    name: "mapproxy wms 1.3.0 unknown request",
    path: mpWms("1.3.0", { REQUEST: "GetBogus" }),
    sends: report(500, SE130, null, "unknown WMS request type 'getbogus'"),
    expect: retry("http", null),
  },
  // (MapProxy names the request 'None' here: it only keeps REQUEST values it knows)
  {
    name: "mapproxy wmts kvp unknown request",
    path: mpWmtsKvp({ REQUEST: "GetBogus" }),
    sends: report(500, "text/xml", "NoApplicableCode", "unknown WMTS request type 'None'"),
    expect: retry("http", "NoApplicableCode"),
  },
  {
    name: "mapproxy wms 1.1.1 huge size",
    path: mpWms("1.1.1", { WIDTH: 100000, HEIGHT: 100000 }),
    sends: report(500, SE111, null, "image size too large"),
    expect: retry("http", null),
  },
  {
    name: "mapproxy wms 1.3.0 huge size",
    path: mpWms("1.3.0", { WIDTH: 100000 }),
    sends: report(500, SE130, null, "image size too large"),
    expect: retry("http", null),
  },

  // -- EXCEPTIONS= (on an unknown layer): the image forms are tiles, XML stays a report
  { name: "mapproxy wms 1.1.1 se_inimage", path: mpWms("1.1.1", { LAYERS: "nosuch", EXCEPTIONS: "application/vnd.ogc.se_inimage" }), sends: PNG, expect: TILE },
  { name: "mapproxy wms 1.1.1 se_blank", path: mpWms("1.1.1", { LAYERS: "nosuch", EXCEPTIONS: "application/vnd.ogc.se_blank" }), sends: PNG, expect: TILE },
  { name: "mapproxy wms 1.3.0 INIMAGE", path: mpWms("1.3.0", { LAYERS: "nosuch", EXCEPTIONS: "INIMAGE" }), sends: PNG, expect: TILE },
  { name: "mapproxy wms 1.3.0 BLANK", path: mpWms("1.3.0", { LAYERS: "nosuch", EXCEPTIONS: "BLANK" }), sends: PNG, expect: TILE },
  {
    name: "mapproxy wms 1.3.0 XML",
    path: mpWms("1.3.0", { LAYERS: "nosuch", EXCEPTIONS: "XML" }),
    sends: report(500, SE130, "LayerNotDefined", "unknown layer: nosuch"),
    expect: serviceException("LayerNotDefined", "unknown layer: nosuch"),
  },

  // -- documents that are not tiles, all 200
  {
    name: "mapproxy wms 1.1.1 capabilities",
    path: "/service?SERVICE=WMS&VERSION=1.1.1&REQUEST=GetCapabilities",
    sends: plain(200, "application/vnd.ogc.wms_xml"),
    expect: retry("invalid-response"),
  },
  {
    name: "mapproxy wms 1.3.0 capabilities",
    path: "/service?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetCapabilities",
    sends: plain(200, "text/xml; charset=utf-8"),
    expect: retry("invalid-response"),
  },
  {
    name: "mapproxy wmts kvp capabilities",
    path: "/service?SERVICE=WMTS&REQUEST=GetCapabilities",
    sends: plain(200, "application/xml"),
    expect: retry("invalid-response"),
  },
  {
    name: "mapproxy wmts rest capabilities",
    path: "/wmts/1.0.0/WMTSCapabilities.xml",
    sends: plain(200, "application/xml"),
    expect: retry("invalid-response"),
  },
  {
    name: "mapproxy tms tilemap document",
    path: "/tms/1.0.0/osm/webmercator",
    sends: plain(200, "text/xml; charset=utf-8"),
    expect: retry("invalid-response"),
  },
  { name: "mapproxy root page html", path: "/", sends: plain(200, "text/html; charset=utf-8"), expect: retry("invalid-response") },
  { name: "mapproxy demo page html", path: "/demo/", sends: plain(200, "text/html"), expect: retry("invalid-response") },
  { name: "mapproxy unknown path", path: "/nosuchpath", sends: plain(404, "text/plain; charset=utf-8"), expect: http(404) },
].map((c) => ({ server: "mapproxy", ...c }));

// MapServer 8.0 (CGI) sends every answer with status 200: it writes no Status: header, even for
// exception reports. WMS 1.1.1 reports are application/vnd.ogc.se_xml; charset=UTF-8, 1.3.0
// text/xml; charset=UTF-8; the text starts with the C function that failed. It has no code for
// bad sizes, unknown requests or versions, and says InvalidSRS (not InvalidCRS) in 1.3.0.
const MS111 = "application/vnd.ogc.se_xml; charset=UTF-8";
const MS130 = "text/xml; charset=UTF-8";
const MS_BAD_LAYERS =
  "msWMSLoadGetMapParams(): WMS server error. Invalid layer(s) given in the LAYERS parameter. A layer might be disabled for this request. Check wms/ows_enable_request settings.";
const MS_STYLE = "msWMSLoadGetMapParams(): WMS server error. Style (bogus) not defined on layer.";
const MS_SIZE = "msWMSLoadGetMapParams(): WMS server error. Image size out of range, WIDTH and HEIGHT must be between 1 and 4096 pixels.";
const MS_BBOX = "msWMSLoadGetMapParams(): WMS server error. Missing required parameter BBOX";
const MS_FORMAT = "msWMSLoadGetMapParams(): Image handling error. Unsupported output format (image/bogus).";
const MS_REQUEST = "msWMSDispatch(): WMS server error. Incomplete or unsupported WMS request";
const MS_CRS =
  'msWMSLoadGetMapParams(): WMS server error. Invalid CRS given : CRS must be valid for all requested layers. msProcessProjection(): Projection library error. proj error "Unknown error (code 4096)" for "init=epsg:9999"';
const BASE_MAPSERVER = [
  { name: "mapserver wms 1.1.1 tile", path: msWms("1.1.1"), sends: PNG, expect: TILE },
  { name: "mapserver wms 1.3.0 tile", path: msWms("1.3.0"), sends: PNG, expect: TILE },
  { name: "mapserver wms 1.3.0 tile jpeg", path: msWms("1.3.0", { FORMAT: "image/jpeg" }), sends: JPEG, expect: TILE },
  { name: "mapserver wms 1.3.0 named style", path: msWms("1.3.0", { LAYERS: "cities", STYLES: "night" }), sends: PNG, expect: TILE },

  {
    name: "mapserver wms 1.1.1 unknown layer",
    path: msWms("1.1.1", { LAYERS: "nosuch" }),
    sends: report(200, MS111, "LayerNotDefined", MS_BAD_LAYERS),
    expect: serviceException("LayerNotDefined", MS_BAD_LAYERS),
  },
  {
    name: "mapserver wms 1.3.0 unknown layer",
    path: msWms("1.3.0", { LAYERS: "nosuch" }),
    sends: report(200, MS130, "LayerNotDefined", MS_BAD_LAYERS),
    expect: serviceException("LayerNotDefined", MS_BAD_LAYERS),
  },
  {
    name: "mapserver wms 1.1.1 unknown style",
    path: msWms("1.1.1", { LAYERS: "cities", STYLES: "bogus" }),
    sends: report(200, MS111, "StyleNotDefined", MS_STYLE),
    expect: serviceException("StyleNotDefined", MS_STYLE),
  },
  {
    name: "mapserver wms 1.3.0 unknown style",
    path: msWms("1.3.0", { LAYERS: "cities", STYLES: "bogus" }),
    sends: report(200, MS130, "StyleNotDefined", MS_STYLE),
    expect: serviceException("StyleNotDefined", MS_STYLE),
  },
  {
    name: "mapserver wms 1.1.1 bad srs",
    path: msWms("1.1.1", { SRS: "EPSG:9999" }),
    sends: report(200, MS111, "InvalidSRS", "msWMSLoadGetMapParams(): WMS server error. Invalid SRS given : SRS must be valid for all requested layers."),
    expect: serviceException("InvalidSRS", "msWMSLoadGetMapParams(): WMS server error. Invalid SRS given : SRS must be valid for all requested layers."),
  },
  // 1.3.0 and still "InvalidSRS"; the text is over 200 chars, so exceptionText is cut.
  {
    name: "mapserver wms 1.3.0 bad crs",
    path: msWms("1.3.0", { CRS: "EPSG:9999" }),
    // Longer than the 200 characters an error keeps: cut, with an ellipsis as its 200th.
    sends: report(200, MS130, "InvalidSRS", MS_CRS.slice(0, 200)),
    expect: serviceException("InvalidSRS", `${MS_CRS.slice(0, 199).trimEnd()}…`),
  },
  {
    name: "mapserver wms 1.1.1 bad format",
    path: msWms("1.1.1", { FORMAT: "image/bogus" }),
    sends: report(200, MS111, "InvalidFormat", MS_FORMAT),
    expect: serviceException("InvalidFormat", MS_FORMAT),
  },
  {
    name: "mapserver wms 1.3.0 bad format",
    path: msWms("1.3.0", { FORMAT: "image/bogus" }),
    sends: report(200, MS130, "InvalidFormat", MS_FORMAT),
    expect: serviceException("InvalidFormat", MS_FORMAT),
  },
  {
    name: "mapserver wms 1.1.1 missing bbox",
    path: msWms("1.1.1", { BBOX: undefined }),
    sends: report(200, MS111, "MissingParameterValue", MS_BBOX),
    expect: serviceException("MissingParameterValue", MS_BBOX),
  },
  {
    name: "mapserver wms 1.3.0 missing bbox",
    path: msWms("1.3.0", { BBOX: undefined }),
    sends: report(200, MS130, "MissingParameterValue", MS_BBOX),
    expect: serviceException("MissingParameterValue", MS_BBOX),
  },
  // No code for these: a report on 200 without a permanent code is retried.
  {
    name: "mapserver wms 1.1.1 width abc",
    path: msWms("1.1.1", { WIDTH: "abc" }),
    sends: report(200, MS111, null, MS_SIZE),
    expect: retry("service-exception", null),
  },
  {
    name: "mapserver wms 1.3.0 width abc",
    path: msWms("1.3.0", { WIDTH: "abc" }),
    sends: report(200, MS130, null, MS_SIZE),
    expect: retry("service-exception", null),
  },
  {
    name: "mapserver wms 1.1.1 huge size",
    path: msWms("1.1.1", { WIDTH: 100000 }),
    sends: report(200, MS111, null, MS_SIZE),
    expect: retry("service-exception", null),
  },
  {
    name: "mapserver wms 1.3.0 huge size",
    path: msWms("1.3.0", { WIDTH: 100000 }),
    sends: report(200, MS130, null, MS_SIZE),
    expect: retry("service-exception", null),
  },
  {
    name: "mapserver wms 1.1.1 unknown request",
    path: msWms("1.1.1", { REQUEST: "GetBogus" }),
    sends: report(200, MS111, null, MS_REQUEST),
    expect: retry("service-exception", null),
  },
  {
    name: "mapserver wms 1.3.0 unknown request",
    path: msWms("1.3.0", { REQUEST: "GetBogus" }),
    sends: report(200, MS130, null, MS_REQUEST),
    expect: retry("service-exception", null),
  },
  {
    name: "mapserver wms unknown version",
    path: msWms("1.2.7"),
    sends: report(
      200,
      MS130,
      null,
      "msWMSDispatch(): WMS server error. Invalid WMS version: VERSION 1.2.7 is not supported. Supported versions are 1.0.0, 1.0.6, 1.0.7, 1.1.0, 1.1.1, 1.3.0",
    ),
    expect: retry("service-exception", null),
  },

  // -- EXCEPTIONS= on an unknown layer
  {
    name: "mapserver wms 1.1.1 se_xml",
    path: msWms("1.1.1", { LAYERS: "nosuch", EXCEPTIONS: "application/vnd.ogc.se_xml" }),
    sends: report(200, MS111, "LayerNotDefined", MS_BAD_LAYERS),
    expect: serviceException("LayerNotDefined", MS_BAD_LAYERS),
  },
  {
    name: "mapserver wms 1.1.1 se_inimage",
    path: msWms("1.1.1", { LAYERS: "nosuch", EXCEPTIONS: "application/vnd.ogc.se_inimage" }),
    sends: PNG,
    expect: TILE,
  },
  { name: "mapserver wms 1.1.1 se_blank", path: msWms("1.1.1", { LAYERS: "nosuch", EXCEPTIONS: "application/vnd.ogc.se_blank" }), sends: PNG, expect: TILE },
  {
    name: "mapserver wms 1.3.0 XML",
    path: msWms("1.3.0", { LAYERS: "nosuch", EXCEPTIONS: "XML" }),
    sends: report(200, MS130, "LayerNotDefined", MS_BAD_LAYERS),
    expect: serviceException("LayerNotDefined", MS_BAD_LAYERS),
  },
  { name: "mapserver wms 1.3.0 INIMAGE", path: msWms("1.3.0", { LAYERS: "nosuch", EXCEPTIONS: "INIMAGE" }), sends: PNG, expect: TILE },
  {
    name: "mapserver wms 1.3.0 INIMAGE jpeg",
    path: msWms("1.3.0", { LAYERS: "nosuch", EXCEPTIONS: "INIMAGE", FORMAT: "image/jpeg" }),
    sends: JPEG,
    expect: TILE,
  },
  { name: "mapserver wms 1.3.0 BLANK", path: msWms("1.3.0", { LAYERS: "nosuch", EXCEPTIONS: "BLANK" }), sends: PNG, expect: TILE },
  {
    name: "mapserver wms 1.3.0 bad EXCEPTIONS",
    path: msWms("1.3.0", { EXCEPTIONS: "BOGUS" }),
    sends: report(200, MS130, "InvalidFormat", "msWMSLoadGetMapParams(): WMS server error. Invalid format BOGUS for the EXCEPTIONS parameter."),
    expect: serviceException("InvalidFormat", "msWMSLoadGetMapParams(): WMS server error. Invalid format BOGUS for the EXCEPTIONS parameter."),
  },

  // -- documents that are not tiles
  {
    name: "mapserver wms 1.1.1 capabilities",
    path: "/cgi-bin/mapserv?SERVICE=WMS&VERSION=1.1.1&REQUEST=GetCapabilities",
    sends: plain(200, "application/vnd.ogc.wms_xml; charset=UTF-8"),
    expect: retry("invalid-response"),
  },
  {
    name: "mapserver wms 1.3.0 capabilities",
    path: "/cgi-bin/mapserv?SERVICE=WMS&VERSION=1.3.0&REQUEST=GetCapabilities",
    sends: plain(200, "text/xml; charset=UTF-8"),
    expect: retry("invalid-response"),
  },
  // MapServer's own HTML error page ("MapServer Message"), for a query it cannot parse
  { name: "mapserver empty query html", path: "/cgi-bin/mapserv?", sends: plain(200, "text/html"), expect: retry("invalid-response") },
  {
    name: "mapserver unknown service html",
    path: "/cgi-bin/mapserv?SERVICE=BOGUS&REQUEST=GetMap",
    sends: plain(200, "text/html"),
    expect: retry("invalid-response"),
  },
].map((c) => ({ server: "mapserver", ...c }));

/** The /as200/ copy of a case (see the top of this file), or null when it is 200 already. */
function as200Variant(c) {
  if (c.sends.status === 200) return null;
  const e = c.expect;
  const keeps = e.outcome === "tile" || (e.outcome === "reject" && e.kind === "service-exception");
  const expect = keeps ? e : c.sends.report ? retry("service-exception", c.sends.code) : retry("invalid-response");
  return { ...c, name: `${c.name} [as200]`, path: `/as200${c.path}`, as200: true, of: c.name, sends: { ...c.sends, status: 200 }, expect };
}
const withVariants = (cases) => cases.flatMap((c) => [c, as200Variant(c)].filter(Boolean));

export const MAPPROXY_CASES = withVariants(BASE_MAPPROXY);
export const MAPSERVER_CASES = withVariants(BASE_MAPSERVER);
