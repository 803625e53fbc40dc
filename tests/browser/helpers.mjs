// Shared helpers of the tests/browser suites (not a test file itself): a read-only static file
// server, Chromium (Debian's /usr/bin/chromium through playwright-core), pages that fail on
// unexpected errors, and screenshots under test-output/.
import http from "node:http";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";
import { before, after, afterEach } from "node:test";
import { startFaultServer } from "../server/fault-server.mjs";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url)); // the repo root, with a trailing /
export const OUTPUT_DIR = path.join(ROOT, "test-output"); // git-ignored

/** Fails early, with what to do, when the wasm package has not been built. */
export function assertBuilt() {
  const wasm = path.join(ROOT, "pkg/gen/tilefetch_bg.wasm");
  if (!fs.existsSync(wasm)) {
    throw new Error(`${wasm} is missing: build the wasm package first (the build script in scripts/), then rerun`);
  }
}

const MIME = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".wasm": "application/wasm",
  ".html": "text/html; charset=utf-8",
  ".json": "application/json; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ts": "text/plain; charset=utf-8",
  ".txt": "text/plain; charset=utf-8",
};

/**
 * A read-only static file server on 127.0.0.1 (port 0).
 *
 * Serves files of `root` whose URL path starts with one of `allow` (e.g. ["/pkg/"]); everything
 * else is 404, as are `..` segments, encoded slashes/backslashes/NULs, and anything whose real
 * path (symlinks resolved) leaves `root`. `index: true` serves `index.html` for directory paths.
 * `served` lists the URL paths answered with 200, in order. `cacheControl(pathname)`: each answer's
 * Cache-Control (no-store unless given: a test's page is built again for each run).
 *
 * @returns {Promise<{url: string, served: string[], close(): Promise<void>}>}
 */
export async function startStaticServer(root, { allow = ["/"], index = false, cacheControl = () => "no-store" } = {}) {
  const realRoot = fs.realpathSync(root);
  const served = [];
  const sockets = new Set();

  const notFound = (res, why = "not found") => {
    res.writeHead(404, { "Content-Type": "text/plain; charset=utf-8", "Cache-Control": "no-store" });
    res.end(`${why}\n`);
  };

  const server = http.createServer((req, res) => {
    req.resume();
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "text/plain" });
      return res.end("method not allowed\n");
    }
    let pathname;
    try {
      pathname = new URL(req.url, "http://static.invalid").pathname;
      if (/%2f|%5c|%00/i.test(pathname)) return notFound(res);
      pathname = decodeURIComponent(pathname);
    } catch {
      return notFound(res, "bad path");
    }
    const segments = pathname.split("/");
    if (pathname.includes("\\") || pathname.includes("\0") || segments.includes("..") || segments.includes(".")) {
      return notFound(res);
    }
    if (!allow.some((prefix) => pathname.startsWith(prefix))) return notFound(res);
    if (pathname.endsWith("/")) {
      if (!index) return notFound(res);
      pathname += "index.html";
    }

    let file;
    try {
      file = fs.realpathSync(path.join(realRoot, pathname));
    } catch {
      return notFound(res);
    }
    if (!file.startsWith(realRoot + path.sep)) return notFound(res);
    let stat;
    try {
      stat = fs.statSync(file);
    } catch {
      return notFound(res);
    }
    if (!stat.isFile()) return notFound(res);

    served.push(pathname);
    res.writeHead(200, {
      "Content-Type": MIME[path.extname(file).toLowerCase()] ?? "application/octet-stream",
      "Content-Length": String(stat.size),
      "Cache-Control": cacheControl(pathname),
      "X-Content-Type-Options": "nosniff",
    });
    if (req.method === "HEAD") return res.end();
    fs.createReadStream(file)
      .on("error", () => res.destroy())
      .pipe(res);
  });
  server.on("connection", (s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address();

  let closed = null;
  return {
    url: `http://127.0.0.1:${port}`,
    served,
    close() {
      closed ??= new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections?.();
        for (const s of sockets) s.destroy();
      });
      return closed;
    },
  };
}

export const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";

/**
 * Launches headless Chromium (a fresh temporary profile: playwright's plain launch).
 * `webgl: true` keeps the GPU process and renders WebGL with SwiftShader (for MapLibre).
 */
export async function launchBrowser({ webgl = false, args = [] } = {}) {
  if (!fs.existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (or set CHROMIUM_PATH)`);
  }
  const gpu = webgl ? ["--use-angle=swiftshader", "--enable-unsafe-swiftshader", "--ignore-gpu-blocklist"] : ["--disable-gpu"];
  return chromium.launch({
    executablePath: CHROMIUM,
    args: [
      "--no-sandbox",
      ...gpu,
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...args,
    ],
    timeout: 20_000,
  });
}

/**
 * A new page in its own context that records page errors, console errors and failed requests.
 * `expectedConsoleError(msg)` says which console errors are expected (e.g. Chromium's
 * "Failed to load resource: … 503" lines for the fault server's deliberate errors).
 * `page.problems()` lists the unexpected ones; `page.assertNoProblems()` fails on any.
 */
export async function newCheckedPage(browser, { expectedConsoleError = () => false, viewport = { width: 900, height: 640 } } = {}) {
  const context = await browser.newContext({ viewport });
  const page = await context.newPage();
  const problems = [];
  const onConsole = (where) => (msg) => {
    if (msg.type() !== "error") return;
    if (expectedConsoleError(msg)) return;
    const loc = msg.location();
    problems.push(`${where} console.error: ${msg.text()}${loc?.url ? ` (at ${loc.url}:${loc.lineNumber})` : ""}`);
  };
  page.on("pageerror", (err) => problems.push(`pageerror: ${err.stack || err.message || err}`));
  page.on("console", onConsole("page"));
  page.on("worker", (worker) => {
    worker.on("console", onConsole(`worker ${worker.url()}`));
  });
  page.on("crash", () => problems.push("page crashed"));
  page.problems = () => [...problems];
  page.closeContext = () => context.close();
  return page;
}

/**
 * Chromium logs every fetch that got an HTTP error status, and every fetch that a server without
 * CORS headers answered (a CORS policy line, then net::ERR_FAILED); these are expected for `origin`.
 */
export function failedLoadFrom(origin) {
  return (msg) => {
    const text = msg.text();
    if (text.startsWith(`Access to fetch at '${origin}/`) && text.includes("has been blocked by CORS policy")) return true;
    return (
      /^Failed to load resource: (the server responded with a status of \d+|net::ERR_FAILED)/.test(text) && (msg.location()?.url ?? "").startsWith(`${origin}/`)
    );
  };
}

/** Saves a full-page screenshot to test-output/<name>.png; returns the path. */
export async function screenshot(page, name) {
  fs.mkdirSync(OUTPUT_DIR, { recursive: true });
  const file = path.join(OUTPUT_DIR, `${name.replace(/[^\w.-]+/g, "-")}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Waits for the page to publish `window.__results` (an object, or `{error}` on failure) and
 * returns it. Fails with the page's recorded problems when it times out.
 */
export async function pageResults(page, { timeout = 15_000 } = {}) {
  try {
    await page.waitForFunction(() => window.__results !== undefined, null, { timeout });
  } catch (e) {
    const problems = page.problems?.() ?? [];
    throw new Error(`window.__results never appeared (${e.message.split("\n")[0]})\n${problems.join("\n")}`);
  }
  return page.evaluate(() => window.__results);
}

/** `${srv.url}/tile/z/x/y.png?run=...&<params>` */
export function tileUrl(srv, run, [z, x, y], params = {}) {
  const q = new URLSearchParams({ run, ...Object.fromEntries(Object.entries(params).map(([k, v]) => [k, String(v)])) });
  return `${srv.url}/tile/${z}/${x}/${y}.png?${q}`;
}

/**
 * Runs `scenario` (a function of one argument that imports "/pkg/browser.js") in a dedicated
 * module worker of `page`, with `args`; resolves with what it returns. The worker is made from the
 * function's source, its import of the package made absolute against `origin` (a blob worker has
 * no base URL of its own to resolve it against).
 */
export function inWorker(page, scenario, args, origin) {
  return page.evaluate(
    ({ source, args }) =>
      new Promise((resolve, reject) => {
        const code = `const scenario = ${source};\nself.onmessage = async (e) => self.postMessage(await scenario(e.data));`;
        const worker = new Worker(URL.createObjectURL(new Blob([code], { type: "text/javascript" })), { type: "module" });
        worker.onmessage = (e) => resolve(e.data);
        worker.onerror = (e) => reject(new Error(e.message));
        worker.postMessage(args);
      }),
    { source: scenario.toString().replace('import("/pkg/browser.js")', `import("${origin}/pkg/browser.js")`), args },
  );
}

/**
 * The set-up of a suite of blank pages over the fault server: registers node:test hooks that start
 * the fault server, a static server for pkg/ and the fixtures, and Chromium (closed after the
 * suite; each test's pages after the test). `suite.srv` and `suite.web` are set once started;
 * `suite.blankPage(expected?)` opens tests/browser/fixtures/blank.html in a page of its own,
 * console errors `expected(msg)` says are expected (beside the fault server's) not counted.
 */
export function blankPageSuite() {
  const suite = { srv: null, web: null };
  let browser;
  const pages = new Set();
  before(async () => {
    assertBuilt();
    suite.srv = await startFaultServer({ seed: 1 });
    suite.web = await startStaticServer(ROOT, { allow: ["/pkg/", "/tests/browser/fixtures/"] });
    browser = await launchBrowser();
  });
  afterEach(async () => {
    for (const page of pages) await page.closeContext().catch(() => {});
    pages.clear();
  });
  after(async () => {
    await browser?.close();
    await suite.web?.close();
    await suite.srv?.close();
  });
  suite.blankPage = async (expected = () => false) => {
    const fault = failedLoadFrom(suite.srv.url);
    const page = await newCheckedPage(browser, { expectedConsoleError: (msg) => fault(msg) || expected(msg) });
    pages.add(page);
    await page.goto(`${suite.web.url}/tests/browser/fixtures/blank.html`);
    return page;
  };
  return suite;
}
