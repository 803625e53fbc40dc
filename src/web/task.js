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
