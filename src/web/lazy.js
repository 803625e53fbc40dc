// The browser entry's lazy loading, bundled (minified) into pkg/gen/tilefetch.js by
// scripts/bundle-glue.mjs and started by pkg/browser.js: the .wasm is compiled in the background
// from the moment of import, without top-level await (a module service worker may not use it,
// and it would hold back every module that imports the package). A call made before the module
// is ready waits for it inside its own deadline (the core counts the deadline from the call); if
// the module cannot be loaded, every call rejects with a TileError saying so. Nothing here runs
// until `startLoading`: the Node and workerd entries import the same bundle and never call it.

/**
 * The fetchTile options that hold a call's first request back (a start jitter) or that only the
 * core makes a request of (a range): a call that sets one waits for the module to send it. Every
 * other leaves the first request as `buildRequest` builds it from the call's fields, what
 * `sendEarly` sends (tests/js/early.test.mjs holds the registry's options to this).
 */
export const LATE_OPTIONS = Object.freeze(["startJitterMs", "range"]);

// How many calls at most send their first request before the module is ready: a first view's
// (the browser bounds what an HTTP/1.1 host is sent), not a burst nobody bounds.
const EARLY_MAX = 64;

/**
 * The lazy API over the glue's exports (`init`, `fetchTileCalledAt`, `stats`, `TileClient`), the
 * TileError class of the same bundle, and the request snippets' `resolveUrls`, `buildRequest`
 * and `sendEarly`.
 */
export function lazyApi({ init, fetchTileCalledAt, stats: coreStats, TileClient: CoreTileClient, TileError, resolveUrls, buildRequest, sendEarly }) {
  let ready = false; // the module is compiled and instantiated
  let failure = null; // why it could not be loaded
  let loading = null; // settles once the module is ready or has failed
  let from = ""; // where the module was looked for

  /** Starts compiling the module at `wasmUrl`; never rejects. */
  function startLoading(wasmUrl) {
    from = String(wasmUrl);
    loading ??= init({ module_or_path: fetchModule(from) }).then(
      () => {
        ready = true;
        warmUp();
      },
      (cause) => {
        failure = cause;
      },
    );
  }

  const now = () => performance.now();

  // A transparent 1×1 PNG: the body of the warm-up call's answer.
  const WARM_TILE = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="), (c) =>
    c.charCodeAt(0),
  );

  /**
   * One call through a client of its own, answered by a `fetch` of its own (nothing is sent), as
   * soon as the module is ready: the engine compiles the code every tile runs (the module's
   * functions are compiled on their first call, the glue's JS on its first runs) while the page
   * still waits for its first answers, not when they arrive. The default client and its stats
   * never see it.
   */
  function warmUp() {
    try {
      const client = new CoreTileClient({});
      const answer = () => Promise.resolve(new Response(WARM_TILE, { headers: { "content-type": "image/png" } }));
      client.fetchTileCalledAt(now(), "https://warm-up.invalid/0/0/0.png", { fetch: answer }).then(
        () => client.free(),
        () => client.free(),
      );
    } catch {
      // nothing to warm: the calls that follow compile what they run
    }
  }

  /**
   * The module's response, refused unless it is one: a bundler that did not emit the .wasm leaves
   * the page a 404 (often an HTML page), which the compiler would only call a bad magic number.
   */
  async function fetchModule(url) {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return response;
  }

  /**
   * Every call's rejection when the module could not be loaded: kind "network" (the .wasm is
   * fetched like a tile), its `cause` the loader's error. `url` is left empty: redacting it is the
   * module's job (src/redact.rs), and the module is what is missing.
   */
  function unavailable(called) {
    const reason = String(failure?.message ?? failure);
    const message = `tilefetch could not load its WebAssembly module from ${from}: ${reason}. If a bundler built this page, it must ship the .wasm beside its output: see "Bundlers" in tilefetch's README`;
    return new TileError(message, {
      kind: "network",
      attempts: 0,
      elapsedMs: now() - called,
      url: "",
      cause: failure,
    });
  }

  let earlyCount = 0;

  /**
   * A call of the default client made before the module is ready: its first request sent now
   * (`sendEarly`) when the core would send it as it is (a URL of one mirror that the core takes,
   * none of LATE_OPTIONS, request fields the platform takes, a signal not aborted, a `fetch`
   * option that is a function); what to call once the call has settled, or null.
   */
  function early(url, options) {
    if (failure || earlyCount >= EARLY_MAX || typeof url !== "string" || url.includes("{s}")) return null;
    let fetchOption;
    let signal;
    let headers;
    let deadlineMs;
    const fields = [];
    try {
      if (options != null) {
        if (typeof options !== "object" || Object.getPrototypeOf(options) !== Object.prototype) return null;
        if (Object.keys(options).some((key) => LATE_OPTIONS.includes(key))) return null;
        ({ fetch: fetchOption, signal, headers, deadlineMs } = options);
        // Every text option as a field line, as the core passes them: `buildRequest` takes the
        // request's fields among them and leaves the rest.
        for (const [name, value] of Object.entries(options)) {
          if (typeof value !== "string") continue;
          if (value.includes("\n")) return null; // no field's value: the core refuses it
          fields.push(`${name}=${value}`);
        }
      }
      if (fetchOption !== undefined && typeof fetchOption !== "function") return null;
      if (signal != null && (!(signal instanceof AbortSignal) || signal.aborted)) return null;
    } catch {
      return null; // a getter that throws: the core's validation says so
    }
    const href = resolveUrls(url, "");
    if (typeof href !== "string") return null;
    const request = buildRequest(href, headers ?? undefined, fields.join("\n"), fetchOption, 0);
    if (request.refusedField !== undefined) return null;
    // Not past the call's deadline: once it has passed, no attempt takes the answer.
    if (Number.isFinite(deadlineMs) && deadlineMs > 0) {
      // A timer's longest delay: a longer one fires at once.
      const timeout = AbortSignal.timeout(Math.min(deadlineMs, 2 ** 31 - 1));
      signal = signal == null ? timeout : AbortSignal.any([signal, timeout]);
    }
    const release = sendEarly(request, signal ?? undefined);
    if (release) earlyCount += 1;
    return release;
  }

  /** As the core's fetchTile. */
  function fetchTile(url, options) {
    const called = now();
    if (ready) return fetchTileCalledAt(called, url, options);
    const release = early(url, options);
    const call = loading.then(() => (ready ? fetchTileCalledAt(called, url, options) : Promise.reject(unavailable(called))));
    if (release) call.then(release, release);
    return call;
  }

  /** As the core's stats. */
  function stats() {
    return ready ? coreStats() : {};
  }

  /**
   * The core's TileClient, made as soon as the module is ready. A config refused by the core
   * throws at `new TileClient(...)` when the module is ready by then (as in Node), else every call
   * rejects with that TileError.
   */
  class TileClient {
    #client = null;
    #pending = null;
    #freed = false;

    constructor(config) {
      if (ready) {
        this.#client = new CoreTileClient(config);
        return;
      }
      // A client freed before the module was ready never gets a core client.
      this.#pending = loading.then(() => (ready && !this.#freed ? (this.#client = new CoreTileClient(config)) : null));
      // A refused config is each call's rejection, never an unhandled one of its own.
      this.#pending.catch(() => {});
    }

    fetchTile(url, options) {
      const called = now();
      if (this.#client) return this.#client.fetchTileCalledAt(called, url, options);
      return this.#pending.then(() => (this.#client ? this.#client.fetchTileCalledAt(called, url, options) : Promise.reject(unavailable(called))));
    }

    stats() {
      return this.#client ? this.#client.stats() : {};
    }

    hostSettings(host) {
      return this.#client ? this.#client.hostSettings(host) : null;
    }

    free() {
      this.#client?.free();
      this.#client = null;
      this.#freed = true;
      this.#pending = Promise.reject(new TileError("this TileClient was freed", { kind: "invalid-options", attempts: 0, elapsedMs: 0, url: "" }));
      this.#pending.catch(() => {});
    }
  }

  return { startLoading, fetchTile, stats, TileClient };
}
