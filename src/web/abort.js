// The JS half of src/web/abort.rs: one "abort" listener per watched signal, shared by every call
// watching it, that tells the module the signal's id. The module hands over one function for all
// signals, so watching a signal costs a JS arrow function, not a wasm-bindgen closure (an
// allocation in the module and a finalizer registration each), and finding a watched signal is a
// lookup here, not a comparison per watched signal across the boundary.

const watched = new WeakMap();
let nextId = 1;

/** The id of `signal`, listened to from now on: `onAbort(id)` runs when it fires. */
export function watchSignal(signal, onAbort) {
  const known = watched.get(signal);
  if (known !== undefined) return known.id;
  const id = nextId++;
  const listener = () => onAbort(id);
  watched.set(signal, { id, listener });
  try {
    signal.addEventListener("abort", listener);
  } catch {
    // Not a real AbortSignal after all: the module still reads `aborted` on every check.
  }
  return id;
}

/** Stops listening to `signal` (when no call watches it any more). */
export function unwatchSignal(signal) {
  const known = watched.get(signal);
  if (known === undefined) return;
  watched.delete(signal);
  try {
    signal.removeEventListener("abort", known.listener);
  } catch {}
}
