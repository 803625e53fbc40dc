// What the OpenLayers and Leaflet adapters do for a tile server that sends no CORS headers (as
// MapServer's CGI and GeoServer do by default): a page's `fetch` may not read its tiles, an
// <img> may show them. Such a tile loads as the map library's own loader would load it, an image
// element with the library's `crossOrigin`, through the same TileClient: its deadline, jittered
// retries (an image that fails says no status, so every failure is retried within the deadline),
// the host's queue, breaker, budget and pause, aborts, stats() and events all still apply.
// Not a subpath of the package: the adapters'.

// How long an origin found without CORS headers loads its tiles as images before one tile asks
// with `fetch` again (its server may have been fixed).
const RECHECK_MS = 5 * 60_000;

// How long an origin not seen before waits for its first tile's answer (see `loadTile`) before
// its next tile is a first contact of its own (a first tile that hangs). Long enough for a WMS
// server's render of one tile (MapServer's CGI starts a process per request).
const FIRST_CONTACT_MAX_MS = 1500;

/** Origins found without CORS headers -> when. Shared by every adapter of the page. */
const imageOrigins = new Map();
/** Origins whose answer a fetch could read: their tiles never wait for a first contact. */
const corsOrigins = new Set();
/**
 * Origins whose first tile is on its way -> `{ contact, known }`: a promise that settles once
 * the origin's CORS answer is known, and what settles it.
 */
const firstContacts = new Map();
/**
 * Tiles of origins that send CORS headers that were loaded as images all the same, while their
 * origin's first contact was on its way (most of a first view), with their image: asked again
 * (a map panned back, or redrawn), they are shown from it, as the library's own loader shows an
 * image it has, where a fetch would ask the server once more (an image's bytes are not the
 * client's to keep). The most recent few, the images a first view has.
 */
const shownAsImages = new Map(); // url -> { image, at, address, shownSrc, crossOrigin, referrerPolicy }
const SHOWN_AS_IMAGES_MAX = 64;
// For as long as the client's recent tiles reuse a tile that states nothing of its freshness
// (src/response/freshness.rs): an image's headers cannot be read.
const SHOWN_AS_IMAGES_MS = 5 * 60_000;

/**
 * Keeps the image tile `url` was shown as (`loaded`: `imageFetch`'s image, the `address` it
 * loaded and the image's `src` then, `shownSrc`): it holds the loaded picture in the page, so the
 * tile shown again comes from memory (an image nothing holds any more is asked of the server
 * again where its answer stated no freshness: the long map session in RESULTS.md). Where that
 * image was the library's own element (`element`), the adapter keeps the library from emptying it
 * when the tile goes (`keepsElement`), or has it copied first (`copyKeptElement`); one emptied
 * already is copied now.
 */
function rememberShownAsImage(url, loaded, element, crossOrigin, referrerPolicy) {
  if (typeof url !== "string") return;
  const { image, address, shownSrc } = loaded;
  const shown = { image, at: Date.now(), address, shownSrc, crossOrigin, referrerPolicy };
  shownAsImages.delete(url);
  shownAsImages.set(url, shown);
  if (shownAsImages.size > SHOWN_AS_IMAGES_MAX) shownAsImages.delete(shownAsImages.keys().next().value);
  if (image !== element) return;
  keptElements.set(element, url);
  if (!holdsItsTile(shown)) copyKeptElement(element);
}

/** Whether a kept tile's image still shows the address it was loaded from (a library may empty its element). */
function holdsItsTile(shown) {
  return shown.image.src === shown.shownSrc;
}

/** The library's elements given to `loadTile` that hold a tile's image -> the tile's url. */
const keptElements = new WeakMap();

/**
 * Whether the library's `element`, given to `loadTile`, is the image its tile is kept as
 * (shownAsImages): an adapter whose library empties a tile's element when the tile goes (Leaflet
 * sets a removed tile's `src` to end its request) leaves it as it is, a picture loaded and nothing
 * to end, where a second image made in its place cost every tile of a first view an element.
 */
export function keepsElement(element) {
  const shown = shownAsImages.get(keptElements.get(element));
  return shown?.image === element && holdsItsTile(shown);
}

/**
 * For an adapter that cannot keep the library from emptying `element` (a layer class that
 * removes tiles its own way): called just before, it keeps the tile by an image of the same
 * address, asked as the element asked it (the same CORS mode and referrer policy), made in this
 * task, while the page still has the picture (made a task after the element was emptied, the
 * image was asked of the server again: a probe in Chromium, 16 of 16 tiles).
 */
export function copyKeptElement(element) {
  const url = keptElements.get(element);
  keptElements.delete(element);
  const shown = url === undefined ? undefined : shownAsImages.get(url);
  if (shown?.image !== element) return;
  shown.image = askedAsTheLibrary(new Image(), shown.crossOrigin, shown.referrerPolicy);
  shown.image.src = shown.address;
  shown.shownSrc = shown.image.src;
}

/**
 * What `url` was shown as lately (`{ image }`), if anything; a call that asks the network
 * gets none (the cache modes the client's recent tiles serve no call with: `serves` in
 * src/client/recent.rs).
 */
function shownAsImage(url, extra) {
  const shown = shownAsImages.get(url);
  if (!shown) return null;
  // Expired, or an element the library emptied all the same: the tile goes through the client.
  if (Date.now() - shown.at > SHOWN_AS_IMAGES_MS || !holdsItsTile(shown)) {
    shownAsImages.delete(url);
    return null;
  }
  return ["reload", "no-store", "no-cache"].includes(extra?.cache) ? null : shown;
}

/** Loads through `fetch` in flight, by origin: each one's restart as an image load. */
const fetching = new Map();

// The body an image load hands the core in place of the tile's bytes, which an <img> does not
// give (a transparent 1×1 PNG: a tile to classification; the adapter shows the image element).
const STAND_IN = Uint8Array.from(atob("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="), (c) => c.charCodeAt(0));
/**
 * Whether `tile` is the stand-in body of another call's image load: a call that joined an
 * identical one in flight (the core serves both from one request: `tile_key` in
 * src/client/flights.rs) is answered by that call's `fetch`, never its own, so its image load
 * never ran.
 */
function isStandIn(tile) {
  const data = tile?.data;
  return data?.length === STAND_IN.length && data.every((byte, i) => byte === STAND_IN[i]);
}

// What an aborted image's src becomes: loading it ends the browser's request for the old one.
const VOID_IMAGE = "data:image/gif;base64,R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7";

// What a page learned of an origin is kept for its next visits (the page's own localStorage, where
// there is one): a returning map pays no first contact. An origin that sent CORS headers is
// believed for a week; one found without them, until its recheck is due.
const REMEMBER_MS = 7 * 24 * 3600_000;
const STORAGE_PREFIX = "tilefetch:cors:";
const recalled = new Set();

// A page's first read of its localStorage loads the whole store from the browser, synchronously:
// done once the module has loaded, when the page is likely idle, not in the first tile's path
// (`recall`).
if (typeof document !== "undefined") {
  setTimeout(() => {
    try {
      void globalThis.localStorage?.length;
    } catch {
      // no storage: `recall` finds none either
    }
  }, 0);
}

function remember(origin, answer) {
  try {
    globalThis.localStorage?.setItem(STORAGE_PREFIX + origin, `${answer} ${Date.now()}`);
  } catch {
    // no storage (a worker, a sandboxed frame, storage full): known for this page only
  }
}

/** Loads what an earlier visit learned of `origin`, once per page. */
function recall(origin) {
  if (recalled.has(origin)) return;
  recalled.add(origin);
  let saved = null;
  try {
    saved = globalThis.localStorage?.getItem(STORAGE_PREFIX + origin) ?? null;
  } catch {
    return;
  }
  const [answer, at] = (saved ?? "").split(" ");
  const age = Date.now() - Number(at);
  if (answer === "cors" && age < REMEMBER_MS) corsOrigins.add(origin);
  else if (answer === "refused" && age < RECHECK_MS) imageOrigins.set(origin, Number(at));
}

function originOf(url) {
  try {
    return new URL(url.replace("{s}", "a"), globalThis.location?.href).origin;
  } catch {
    return null;
  }
}

/** Whether tiles of `origin` load as images now (found without CORS and not due a recheck). */
function loadsAsImage(origin) {
  const at = imageOrigins.get(origin);
  if (at === undefined) return false;
  if (Date.now() - at < RECHECK_MS) return true;
  imageOrigins.delete(origin); // this tile asks with fetch again; a `cors` give-up marks it anew
  return false;
}

/** Marks `origin` as without CORS headers and moves its loads still going through fetch to images. */
function markWithoutCors(origin) {
  imageOrigins.set(origin, Date.now());
  remember(origin, "refused");
  firstContacts.get(origin)?.known();
  const restarts = fetching.get(origin);
  if (!restarts) return;
  fetching.delete(origin);
  for (const restart of restarts) restart();
}

/** `image`, set to ask for its address as the library's own images ask (`crossOrigin`, `referrerPolicy`). */
function askedAsTheLibrary(image, crossOrigin, referrerPolicy) {
  if (crossOrigin != null) image.crossOrigin = crossOrigin;
  if (referrerPolicy) image.referrerPolicy = referrerPolicy;
  return image;
}

/**
 * The `fetch` option of an image load: the URL the core picked (a mirror, a cache-busted one)
 * loads into an image element (`element` for the first load, else a new one), decoded first when
 * `decoded`; `into.image` is set to it, `into.address` to the address it loaded and `into.shownSrc`
 * to the image's `src` then (read now: the library may empty its element later), and the core
 * gets a stand-in response. An image that fails to load rejects as a network error would, and so
 * does the load's first image found cut short (`isWhole`; `into.cut` is then set) while
 * `checked()` holds, before and after the check: a later image of the load is taken as it comes
 * (the page hands back the image it has for the address).
 */
function imageFetch(into, crossOrigin, referrerPolicy, element, decoded, checked = () => false) {
  let own = element;
  let unchecked = true;
  return (input, init) =>
    new Promise((resolve, reject) => {
      const signal = init?.signal;
      if (signal?.aborted) {
        reject(signal.reason);
        return;
      }
      // The caller's own element takes the first load (the library's tile: shown as it loads,
      // no second element to copy it from); a retry or hedge beside it gets one of its own.
      const image = askedAsTheLibrary(own ?? new Image(), crossOrigin, referrerPolicy);
      own = null;
      const address = typeof input === "string" ? input : input.url;
      let settled = false;
      const settle = (error) => {
        if (settled) return;
        settled = true;
        signal?.removeEventListener("abort", onAbort);
        image.removeEventListener("load", onLoad);
        image.removeEventListener("error", onError);
        if (error) {
          reject(error);
          return;
        }
        into.image = image;
        into.address = address;
        into.shownSrc = image.src;
        // no-store: the stand-in is no tile for the client to keep.
        resolve(new Response(STAND_IN, { status: 200, headers: { "content-type": "image/png", "cache-control": "no-store" } }));
      };
      const onAbort = () => {
        settle(signal.reason);
        image.src = VOID_IMAGE;
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      const handOver = () => (image.naturalWidth > 0 ? settle(null) : settle(new Error("the tile's image is empty")));
      const loaded = () => {
        if (!unchecked || image.naturalWidth === 0 || !checked()) return handOver();
        unchecked = false;
        isWhole(image).then((whole) => {
          if (whole || !checked()) return handOver();
          into.cut = true;
          settle(new Error("the tile's image is cut short"));
        });
      };
      // Handed over when the library's own loader would hand it over: OpenLayers' once decoded,
      // Leaflet's once loaded (the browser decodes it as it paints it; a decode() first held a
      // full first view back against Leaflet's own loader: ARCHITECTURE.md's ledger). A
      // decode() that rejects for an image that did load still gives a drawable image.
      // Listeners, not onload/onerror, which a library may set on its own element (Leaflet's
      // abort on a zoom replaces them).
      const onLoad = () => (decoded ? image.decode().then(loaded, loaded) : loaded());
      // Not a TypeError (fetch's network error): the core checks those for a CORS refusal.
      const onError = () => settle(new Error("the tile's image did not load"));
      image.addEventListener("load", onLoad);
      image.addEventListener("error", onError);
      image.src = address;
    });
}

/**
 * Whether `image`, loaded, holds the whole of its picture. An image element fires `load`, and
 * its `decode()` resolves, for a body cut short that still begins as an image (a PNG without its
 * end: the top rows shown, the rest blank), where Chromium's `createImageBitmap` refuses it; the
 * core's classification, which reads a fetched body's end, cannot see an image's. True where it
 * cannot be told (no `createImageBitmap`, an element that is no HTMLImageElement, a browser that
 * makes a bitmap of what it has).
 */
function isWhole(image) {
  if (typeof createImageBitmap !== "function" || typeof HTMLImageElement !== "function" || !(image instanceof HTMLImageElement)) {
    return Promise.resolve(true);
  }
  // Its last pixel only: Chromium decodes the whole picture all the same (on the main thread, in
  // the call) and refuses a cut PNG as before, but makes and copies no whole bitmap (measured for
  // PNG tiles: ARCHITECTURE.md's ledger; JPEG and WebP not measured).
  return createImageBitmap(image, image.naturalWidth - 1, image.naturalHeight - 1, 1, 1).then(
    (bitmap) => {
      bitmap.close();
      return true;
    },
    () => false,
  );
}

/**
 * The `fetch` option of an origin's first tile: `fetch` (the caller's, or the platform's) that
 * tells the waiting tiles as soon as the answer's headers could be read (CORS passed).
 */
function firstContactFetch(origin, custom, known) {
  return (input, init) =>
    (custom ?? globalThis.fetch)(input, init).then((response) => {
      corsOrigins.add(origin);
      remember(origin, "cors");
      known();
      return response;
    });
}

/**
 * Whether a tile of `url` asked for now would most likely load as an image: its origin sends
 * no CORS headers, or is not known yet to send them (`loadTile`: an origin's first tiles load as
 * images while its first contact is on its way), or the tile was shown as an image lately and
 * comes back as one (`shownAsImage`). For an adapter that makes its tile's element
 * before the load (Leaflet's): one that shows the image as it is, not a copy drawn into a canvas.
 */
export function likelyImage(url, crossOrigin = null) {
  const origin = fallbackOrigin(url, crossOrigin);
  if (origin === null) return false;
  recall(origin);
  return !corsOrigins.has(origin) || shownAsImage(url) !== null;
}

/**
 * The origin of `url` when its tiles may load as images (another origin than the page's, and
 * an image can help: the library's own image would not ask for CORS, `crossOrigin` unset); else
 * null: its tiles go through fetch, with no first contact.
 */
function fallbackOrigin(url, crossOrigin) {
  if (crossOrigin != null || typeof Image === "undefined") return null;
  const origin = originOf(url);
  return origin === null || origin === globalThis.location?.origin ? null : origin;
}

/**
 * Loads one tile: through fetch (`{tile}`: fetchTile's Tile), or, for a server without CORS
 * headers, as an image element (`{image}`: an HTMLImageElement, loaded, and decoded unless
 * `decoded` is false). `load(url, signal, extra)` is the adapter's (see adapter-options.js);
 * `crossOrigin` and `referrerPolicy` are the library's settings for its own images, `custom` the
 * caller's `fetch` option, `decoded` whether the library's own loader decodes an image before
 * it shows it.
 *
 * A server's CORS answer costs one tile: the first tile of another origin not met before (in
 * this page or, through localStorage, an earlier visit) goes through fetch, and until the
 * headers of its answer are read (CORS passed) or it ends as a `cors` TileError (one fetch and
 * one no-cors check reached the server), at most FIRST_CONTACT_MAX_MS, the origin's other tiles
 * load as the library's own loader loads them, images, at once: the first view waits for no
 * round trip. Their later attempts (retries, hedges) go through fetch once the origin is known
 * to send CORS headers (a status, a Retry-After, a body to read again). Loads of the origin
 * still going through fetch when it is found without CORS move to images, and so do its later
 * tiles. Where the library's own image would ask for CORS too (`crossOrigin` set), an image
 * cannot help: the `cors` TileError is the tile's error. Rejects with the TileError of a
 * give-up.
 */
export function loadTile(load, url, signal, { extra, crossOrigin = null, referrerPolicy, custom, element = null, decoded = true } = {}) {
  // The page's own origin needs no CORS headers: nothing to find out, no first contact.
  const origin = fallbackOrigin(url, crossOrigin);
  if (origin === null) return load(url, signal, extra).then((tile) => ({ tile }));
  const asImage = () => {
    const into = { image: null };
    // Joined to another call's image load: its own once that one has ended. Joined to a fetch
    // of the tile: that tile.
    return load(url, signal, { ...extra, fetch: imageFetch(into, crossOrigin, referrerPolicy, element, decoded) }).then((tile) =>
      into.image ? { image: into.image } : isStandIn(tile) ? asImage() : { tile },
    );
  };
  recall(origin);
  if (loadsAsImage(origin)) return asImage();
  const shown = corsOrigins.has(origin) ? shownAsImage(url, extra) : null;
  if (shown) return signal.aborted ? Promise.reject(signal.reason) : Promise.resolve({ image: shown.image });
  if (corsOrigins.has(origin)) {
    // A server that sent CORS headers: the plain load, nothing to move (a server that stops
    // sending them is found by its next tile, as a first contact would find it).
    return load(url, signal, extra).then(
      (tile) => ({ tile }),
      (error) => {
        if (error?.kind !== "cors") throw error;
        corsOrigins.delete(origin);
        markWithoutCors(origin);
        return asImage();
      },
    );
  }
  if (firstContacts.has(origin)) return whileUnknown(load, url, signal, extra, origin, { crossOrigin, referrerPolicy, custom, element, decoded, asImage });
  let known;
  const contact = new Promise((resolve) => {
    known = resolve;
    setTimeout(resolve, FIRST_CONTACT_MAX_MS);
  }).then(() => {
    if (firstContacts.get(origin)?.contact === contact) firstContacts.delete(origin);
  });
  firstContacts.set(origin, { contact, known });
  return firstContact(load, url, signal, extra, origin, asImage, custom, known);
}

/**
 * A tile of an origin whose CORS answer was on its way when the map asked for it: its first
 * attempt an image, as the library's own loader would load it (all of the view's alike: a
 * browser serves images after fetches, and a fetch sent later would overtake them), and its
 * later ones (retries, hedges) through fetch once the origin is known to send CORS headers
 * (then `{tile}`).
 */
function whileUnknown(load, url, signal, extra, origin, { crossOrigin, referrerPolicy, custom, element, decoded, asImage: imageLoad }) {
  const into = { image: null, cut: false };
  // A first image cut short is not handed over while the origin is not found without CORS
  // headers: the core retries it once the origin's answer is in, through fetch (whose
  // classification sees a cut) when it sends them. A server without them gets its images as the
  // library's own loader shows them.
  const asImage = imageFetch(into, crossOrigin, referrerPolicy, element, decoded, () => !imageOrigins.has(origin));
  let first = true;
  const attempt = (input, init) => {
    // After a cut image, the page would hand the same image back to another image load of the
    // address: the retry waits for the origin's answer (FIRST_CONTACT_MAX_MS at most).
    const contact = into.cut && !corsOrigins.has(origin) ? firstContacts.get(origin)?.contact : undefined;
    if (contact) return unlessAborted(contact, init?.signal).then(() => attempt(input, init));
    const image = first || !corsOrigins.has(origin);
    first = false;
    if (image) return asImage(input, init);
    into.image = null; // this attempt's answer is the tile
    return (custom ?? globalThis.fetch)(input, init);
  };
  return load(url, signal, { ...extra, fetch: attempt }).then(
    (tile) => {
      if (!into.image) return isStandIn(tile) ? imageLoad() : { tile };
      rememberShownAsImage(url, into, element, crossOrigin, referrerPolicy);
      return { image: into.image };
    },
    (error) => {
      // A later attempt through fetch found the origin without CORS headers after all (it
      // stopped sending them): as a known origin's load does, the tile loads as an image.
      if (error?.kind !== "cors") throw error;
      corsOrigins.delete(origin);
      markWithoutCors(origin);
      return imageLoad();
    },
  );
}

/** `promise`, or `signal`'s reason once it aborts first. */
function unlessAborted(promise, signal) {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    });
  });
}

/** One of an origin's first tiles: through fetch, telling the waiting tiles when it knows. */
function firstContact(load, url, signal, extra, origin, asImage, custom, known) {
  const first = viaFetch(load, url, signal, { ...extra, fetch: firstContactFetch(origin, custom, known) }, origin, asImage);
  // Whatever it ends as, the waiting tiles may go: a `cors` give-up has marked the origin.
  first.then(known, known);
  return first;
}

/** One load through fetch that moves to an image load when its origin is found without CORS. */
function viaFetch(load, url, signal, extra, origin, asImage) {
  return new Promise((resolve, reject) => {
    const moved = new AbortController();
    let restarts = fetching.get(origin);
    if (!restarts) fetching.set(origin, (restarts = new Set()));
    const restart = () => {
      moved.abort(new DOMException("moved to an image load", "AbortError"));
      asImage().then(resolve, reject);
    };
    restarts.add(restart);
    const done = () => {
      restarts.delete(restart);
      if (restarts.size === 0 && fetching.get(origin) === restarts) fetching.delete(origin);
    };
    load(url, AbortSignal.any([signal, moved.signal]), extra).then(
      (tile) => {
        done();
        resolve({ tile });
      },
      (error) => {
        if (moved.signal.aborted && !signal.aborted) return; // restarted as an image load
        done();
        if (error?.kind === "cors") {
          markWithoutCors(origin);
          asImage().then(resolve, reject);
          return;
        }
        reject(error);
      },
    );
  });
}
