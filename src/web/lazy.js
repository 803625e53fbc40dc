// The browser entry's lazy loading, bundled (minified) into pkg/gen/tilefetch.js by
// scripts/bundle-glue.mjs and started by pkg/browser.js: the .wasm is compiled in the background
// from the moment of import, without top-level await (a module service worker may not use it,
// and it would hold back every module that imports the package). A call made before the module
// is ready waits for it inside its own deadline (the core counts the deadline from the call); if
// the module cannot be loaded, every call rejects with a TileError saying so. Nothing here runs
// until `startLoading`: the Node and workerd entries import the same bundle and never call it.

/**
 * The lazy API over the glue's exports (`init`, `fetchTileCalledAt`, `stats`, `TileClient`) and
 * the TileError class of the same bundle.
 */
export function lazyApi({ init, fetchTileCalledAt, stats: coreStats, TileClient: CoreTileClient, TileError }) {
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

  /** As the core's fetchTile. */
  function fetchTile(url, options) {
    const called = now();
    if (ready) return fetchTileCalledAt(called, url, options);
    return loading.then(() => (ready ? fetchTileCalledAt(called, url, options) : Promise.reject(unavailable(called))));
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
