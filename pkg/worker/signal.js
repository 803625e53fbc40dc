// An AbortSignal that no request owns. In workerd a real AbortSignal is an I/O object of the
// request that created it: reading its `aborted` from another request's turn throws "Cannot
// perform I/O on behalf of a different request". An upstream call here can be aborted from a
// timer or a retry callback that need not run in the request that made it, so its signal is
// plain JS. The core only reads `aborted` and `reason` and adds/removes one "abort" listener (it
// aborts its own per-attempt controllers), so an object with AbortSignal's prototype serves it.

export function contextFreeAbort() {
  const listeners = new Set();
  const signal = Object.create(AbortSignal.prototype, {
    aborted: { value: false, writable: true, enumerable: true },
    reason: { value: undefined, writable: true, enumerable: true },
    addEventListener: { value: (type, fn) => type === "abort" && typeof fn === "function" && listeners.add(fn) },
    removeEventListener: { value: (_type, fn) => listeners.delete(fn) },
    throwIfAborted: {
      value() {
        if (this.aborted) throw this.reason;
      },
    },
  });
  const abort = (reason = new Error("aborted")) => {
    if (signal.aborted) return;
    signal.aborted = true;
    signal.reason = reason;
    for (const fn of [...listeners]) {
      try {
        fn.call(signal, { type: "abort", target: signal });
      } catch {
        // a listener's failure is its own
      }
    }
  };
  return { signal, abort };
}
