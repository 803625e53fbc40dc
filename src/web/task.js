// The scheduling half of src/web/task.rs: a task that goes to sleep registers its next poll as
// the reaction to a promise of its own. Registering it here, while the task runs, is what makes
// JS (and workerd) run that poll in the task's own context, whoever resolves the promise.

/** Registers `poll(id)` as the reaction to a new promise; returns the function that resolves it. */
export function wakeUpOn(poll, id) {
  let resolve;
  new Promise((r) => {
    resolve = r;
  }).then(() => poll(id));
  return resolve;
}

/**
 * How a promise a task awaits settled (`Settlement` in task.rs): empty until then.
 * @typedef {object} Settlement
 * @property {boolean} [fulfilled]
 * @property {unknown} [value] the value, or the rejection's reason
 */

/**
 * Awaits `promise` for task `id`: when it settles, `settlement` records how, and the task is
 * polled again (from a reaction registered now, in the task's context).
 */
export function settleInto(promise, settlement, poll, id) {
  promise.then(
    (value) => {
      settlement.fulfilled = true;
      settlement.value = value;
      poll(id);
    },
    (error) => {
      settlement.fulfilled = false;
      settlement.value = error;
      poll(id);
    },
  );
}

/**
 * A promise and the two functions that settle it (`Deferred` in task.rs).
 * @typedef {object} Deferred
 * @property {Promise<unknown>} promise
 * @property {(value: unknown) => void} resolve
 * @property {(reason: unknown) => void} reject
 */

/** @returns {Deferred} */
export function deferred() {
  let resolve;
  let reject;
  const promise = new Promise((settle, fail) => {
    resolve = settle;
    reject = fail;
  });
  return { promise, resolve, reject };
}
