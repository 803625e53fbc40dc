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
 * Awaits `promise` for task `id`: when it settles, `cell` gets [true, value] or [false, error]
 * and the task is polled again (from a reaction registered now, in the task's context).
 */
export function settleInto(promise, cell, poll, id) {
  promise.then(
    (value) => {
      cell.push(true, value);
      poll(id);
    },
    (error) => {
      cell.push(false, error);
      poll(id);
    },
  );
}

/** A promise and the two functions that settle it: [promise, resolve, reject]. */
export function deferred() {
  let settle;
  const promise = new Promise((resolve, reject) => {
    settle = [resolve, reject];
  });
  return [promise, ...settle];
}
