//! Runs each call (and each shared flight) as a task of its own whose every poll happens in the
//! JS context that started it.
//!
//! Calls wake one another: a finished call hands its place in a host's queue to the next, a
//! flight's outcome wakes the calls that joined it, a breaker probe's outcome wakes the calls
//! waiting for it. With wasm-bindgen-futures' executor every task is polled from one shared
//! microtask, so a woken call ran inside whichever call happened to schedule it. In workerd
//! that is another request: its fetch and timers then belonged to that request, were refused
//! ("Cannot perform I/O on behalf of a different request") or canceled when it ended.
//!
//! Here a sleeping task waits on a JS promise of its own, whose reaction it registered while
//! being polled in its own context; waking the task resolves that promise, and JS runs the
//! reaction (the next poll) in the context that registered it, whoever resolved it. Pages, Node
//! and workers behave as before: the reaction is a microtask either way.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::sync::Arc;
use std::task::{Context, Wake, Waker};

use std::task::Poll;

use js_sys::{Function, Promise};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;

#[wasm_bindgen(module = "/src/web/task.js")]
extern "C" {
    #[wasm_bindgen(js_name = wakeUpOn)]
    fn wake_up_on(poll: &JsValue, id: f64) -> Function;

    #[wasm_bindgen(js_name = settleInto)]
    fn settle_into(promise: &Promise, settlement: &Settlement, poll: &JsValue, id: f64);

    /// How an awaited promise settled (`Settlement` in task.js): empty until it has.
    type Settlement;
    #[wasm_bindgen(method, getter)]
    fn fulfilled(this: &Settlement) -> Option<bool>;
    #[wasm_bindgen(method, getter)]
    fn value(this: &Settlement) -> JsValue;

    fn deferred() -> Deferred;

    /// A promise and the two functions that settle it (`Deferred` in task.js).
    type Deferred;
    #[wasm_bindgen(method, getter)]
    fn promise(this: &Deferred) -> Promise;
    #[wasm_bindgen(method, getter)]
    fn resolve(this: &Deferred) -> Function;
    #[wasm_bindgen(method, getter)]
    fn reject(this: &Deferred) -> Function;
}

struct Task {
    id: u64,
    future: RefCell<Option<Pin<Box<dyn Future<Output = ()>>>>>,
    /// Resolves the promise whose reaction polls the task again; set while it sleeps.
    resume: RefCell<Option<Function>>,
    /// Woken while being polled: poll again before going to sleep.
    woken: Cell<bool>,
}

thread_local! {
    /// Live tasks (each call and flight in progress: a short list).
    static TASKS: RefCell<Vec<Rc<Task>>> = const { RefCell::new(Vec::new()) };
    static NEXT_ID: Cell<u64> = const { Cell::new(0) };
    /// The task being polled.
    static CURRENT: Cell<u64> = const { Cell::new(0) };
    /// The one JS entry point of every task, given the task's id: a closure per task (or per
    /// sleep) cost every call an allocation and a finalizer registration.
    static POLL: JsValue = Closure::<dyn Fn(f64)>::new(|id: f64| {
        let task = TASKS.with(|tasks| tasks.borrow().iter().find(|t| t.id as f64 == id).cloned());
        if let Some(task) = task {
            run(task);
        }
    })
    .into_js_value();
}

/// A waker names its task by id: a `Waker` must be `Send + Sync`, a JS function is neither.
/// A waker that outlives its task finds nothing and does nothing.
struct TaskWaker(u64);

impl Wake for TaskWaker {
    fn wake(self: Arc<Self>) {
        let task = TASKS.with(|tasks| tasks.borrow().iter().find(|t| t.id == self.0).cloned());
        if let Some(task) = task {
            match task.resume.borrow_mut().take() {
                Some(resume) => {
                    let _ = resume.call0(&JsValue::UNDEFINED);
                }
                None => task.woken.set(true),
            }
        }
    }
}

/// Starts `future` as a task; its first poll is a microtask of the calling context.
pub fn spawn(future: impl Future<Output = ()> + 'static) {
    let id = NEXT_ID.with(|n| n.replace(n.get() + 1));
    let task = Rc::new(Task {
        id,
        future: RefCell::new(Some(Box::pin(future))),
        resume: RefCell::new(None),
        woken: Cell::new(false),
    });
    TASKS.with(|tasks| tasks.borrow_mut().push(task));
    let start = POLL.with(|poll| wake_up_on(poll, id as f64));
    let _ = start.call0(&JsValue::UNDEFINED);
}

/// Runs `future` as a task and returns a promise of its outcome.
pub fn promise(future: impl Future<Output = Result<JsValue, JsValue>> + 'static) -> Promise {
    let parts = deferred();
    let (resolve, reject) = (parts.resolve(), parts.reject());
    spawn(async move {
        let _ = match future.await {
            Ok(value) => resolve.call1(&JsValue::UNDEFINED, &value),
            Err(error) => reject.call1(&JsValue::UNDEFINED, &error),
        };
    });
    parts.promise()
}

/// Awaits a JS promise inside a task. Instead of a waker closure per promise (two wasm-bindgen
/// closures, each with a finalizer, per attempt), the promise's reaction polls the task by id,
/// in the task's own context. So it ignores the poll's waker: it is only for futures the task
/// polls with its own (plain `.await` and `race`), not for a combinator that substitutes wakers.
pub struct PromiseFuture {
    promise: Option<Promise>,
    settlement: Settlement,
}

impl PromiseFuture {
    pub fn new(promise: Promise) -> PromiseFuture {
        PromiseFuture { promise: Some(promise), settlement: js_sys::Object::new().unchecked_into() }
    }
}

impl Future for PromiseFuture {
    type Output = Result<JsValue, JsValue>;

    fn poll(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(fulfilled) = self.settlement.fulfilled() {
            let value = self.settlement.value();
            return Poll::Ready(if fulfilled { Ok(value) } else { Err(value) });
        }
        if let Some(promise) = self.promise.take() {
            let id = CURRENT.with(Cell::get) as f64;
            POLL.with(|poll| settle_into(&promise, &self.settlement, poll, id));
        }
        Poll::Pending
    }
}

fn run(task: Rc<Task>) {
    let waker = Waker::from(Arc::new(TaskWaker(task.id)));
    let mut cx = Context::from_waker(&waker);
    CURRENT.with(|current| current.set(task.id));
    let _turn = super::effects::Turn::begin();
    loop {
        task.woken.set(false);
        let done = match task.future.borrow_mut().as_mut() {
            Some(future) => future.as_mut().poll(&mut cx).is_ready(),
            None => true,
        };
        if done {
            task.future.borrow_mut().take();
            TASKS.with(|tasks| tasks.borrow_mut().retain(|t| !Rc::ptr_eq(t, &task)));
            return;
        }
        if !task.woken.get() {
            break;
        }
    }
    let resume = POLL.with(|poll| wake_up_on(poll, task.id as f64));
    *task.resume.borrow_mut() = Some(resume);
}
