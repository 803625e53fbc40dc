// Calls in the TileClient at once per handler (`maxConcurrent`, `queueOrder`): one limit for the
// handler, summed over the upstream's hosts, that worker.js narrows while a breaker is not closed.
// A waiter here is a plain promise: workerd runs its continuation in its own request.
// `setLimit` narrows it while the upstream's breaker is not closed (see worker.js).

export function createLimiter(limit, order) {
  let active = 0;
  const queue = [];
  const pump = () => {
    while (active < limit && queue.length > 0) {
      active++;
      (order === "lifo" ? queue.pop() : queue.shift())();
    }
  };
  const release = () => {
    active--;
    pump();
  };
  return {
    /** Resolves with a `release` function once a place is free, or with null after `timeoutMs`. */
    acquire(timeoutMs) {
      return new Promise((resolve) => {
        let timer;
        const grant = () => {
          clearTimeout(timer);
          resolve(once(release));
        };
        queue.push(grant);
        pump();
        if (queue.includes(grant)) {
          timer = setTimeout(() => {
            const i = queue.indexOf(grant);
            if (i >= 0) {
              queue.splice(i, 1);
              resolve(null);
            }
          }, timeoutMs);
        }
      });
    },
    setLimit(n) {
      limit = n;
      pump();
    },
    get limit() {
      return limit;
    },
  };
}

function once(fn) {
  let done = false;
  return () => {
    if (!done) {
      done = true;
      fn();
    }
  };
}
