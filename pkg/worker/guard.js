// Every request waits for its upstream call on a timer of its own. In workerd an I/O object (a
// fetch, a timer) belongs to the request that created it and is canceled when that request ends;
// should a call ever be resumed from another request's turn and stranded that way, the request
// still answers (503, or its stale copy) instead of hanging, and aborts the call through its
// context-free signal (signal.js), which frees the places it holds.

/** `promise`, or `fallback()` after `ms` on a timer created in the calling request's context. */
export async function guard(promise, ms, fallback) {
  let timer;
  const late = new Promise((resolve) => {
    timer = setTimeout(() => resolve(fallback()), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}
