//! Watching the caller's `AbortSignal`. Map clients share one signal across hundreds of tiles,
//! so every call watching the same signal shares one "abort" listener on it (Node warns past ten
//! listeners, and each listener is a closure to allocate), removed when the last call settles.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::prelude::*;
use web_sys::AbortSignal;

use crate::retry::platform::Cancel;

#[wasm_bindgen(module = "/src/web/abort.js")]
extern "C" {
    /// The signal's id, with a listener that calls `on_abort(id)` (one per signal).
    #[wasm_bindgen(js_name = watchSignal)]
    fn watch_signal(signal: &AbortSignal, on_abort: &JsValue) -> f64;

    #[wasm_bindgen(js_name = unwatchSignal)]
    fn unwatch_signal(signal: &AbortSignal);
}

type WakerSlot = Rc<RefCell<Option<Waker>>>;

/// One watched signal: its id (abort.js) and the calls waiting on it.
struct Watched {
    id: f64,
    signal: AbortSignal,
    fired: Cell<bool>,
    waiting: RefCell<Vec<WakerSlot>>,
}

thread_local! {
    /// Signals with a listener, each shared by the calls watching it: a short list.
    static WATCHED: RefCell<Vec<Rc<Watched>>> = const { RefCell::new(Vec::new()) };
    /// The one function every signal's listener calls, with the signal's id.
    static ON_ABORT: JsValue = Closure::<dyn Fn(f64)>::new(|id: f64| {
        let watched = WATCHED.with(|all| all.borrow().iter().find(|w| w.id == id).cloned());
        if let Some(watched) = watched {
            watched.fired.set(true);
            let slots: Vec<WakerSlot> = watched.waiting.borrow().clone();
            for slot in slots {
                if let Some(waker) = slot.borrow_mut().take() {
                    waker.wake();
                }
            }
        }
    })
    .into_js_value();
}

fn watch(signal: &AbortSignal) -> Rc<Watched> {
    let id = ON_ABORT.with(|on_abort| watch_signal(signal, on_abort));
    if let Some(watched) = WATCHED.with(|all| all.borrow().iter().find(|w| w.id == id).cloned()) {
        return watched;
    }
    let watched = Rc::new(Watched {
        id,
        signal: signal.clone(),
        fired: Cell::new(false),
        waiting: RefCell::new(Vec::new()),
    });
    WATCHED.with(|all| all.borrow_mut().push(watched.clone()));
    watched
}

fn unwatch(watched: &Rc<Watched>, slot: &WakerSlot) {
    watched.waiting.borrow_mut().retain(|s| !Rc::ptr_eq(s, slot));
    if watched.waiting.borrow().is_empty() {
        unwatch_signal(&watched.signal);
        WATCHED.with(|all| all.borrow_mut().retain(|w| !Rc::ptr_eq(w, watched)));
    }
}

/// A stop that belongs to no JS context. In workerd an `AbortController` is an I/O object of the
/// request that made it: a flight shared by several requests' calls could not be stopped by
/// whichever of them leaves last. This one is plain Rust state; stopping it wakes the flight,
/// which then aborts its own request from its own context.
#[derive(Default)]
pub struct Stop {
    stopped: Cell<bool>,
    waiting: RefCell<Vec<Waker>>,
}

impl Stop {
    pub fn stop(&self) {
        if !self.stopped.replace(true) {
            for waker in self.waiting.borrow_mut().drain(..) {
                waker.wake();
            }
        }
    }

    pub fn is_stopped(&self) -> bool {
        self.stopped.get()
    }

    /// Takes a stop back, for a flight a new caller joins while it finishes its last attempt
    /// (nothing that read the stop has ended anything yet: the attempt is still out).
    pub fn resume(&self) {
        self.stopped.set(false);
    }
}

/// One call's view of its signal (or of no signal), or a flight's view of its [`Stop`].
pub struct AbortWatch {
    signal: Option<AbortSignal>,
    watched: Option<(Rc<Watched>, WakerSlot)>,
    stop: Option<Rc<Stop>>,
}

impl AbortWatch {
    pub fn new(signal: Option<AbortSignal>) -> AbortWatch {
        // An already-aborted signal needs no listener: `is_aborted` reads it directly.
        let watched = signal.as_ref().filter(|s| !s.aborted()).map(|signal| {
            let watched = watch(signal);
            let slot = WakerSlot::default();
            watched.waiting.borrow_mut().push(slot.clone());
            (watched, slot)
        });
        AbortWatch { signal, watched, stop: None }
    }

    pub fn of_stop(stop: Rc<Stop>) -> AbortWatch {
        AbortWatch { signal: None, watched: None, stop: Some(stop) }
    }

    pub fn is_aborted(&self) -> bool {
        self.watched.as_ref().is_some_and(|(w, _)| w.fired.get())
            || self.signal.as_ref().is_some_and(AbortSignal::aborted)
            || self.stop.as_ref().is_some_and(|s| s.is_stopped())
    }

    /// The signal's `reason` (an `AbortError`, or a `TimeoutError` from `AbortSignal.timeout`).
    pub fn reason(&self) -> JsValue {
        self.signal.as_ref().map_or(JsValue::UNDEFINED, AbortSignal::reason)
    }

    /// Resolves when the signal fires; pending forever when there is no signal.
    pub fn fired(&self) -> Fired<'_> {
        Fired { watch: self }
    }
}

impl Cancel for AbortWatch {
    fn is_aborted(&self) -> bool {
        AbortWatch::is_aborted(self)
    }

    fn fired(&self) -> impl Future<Output = ()> {
        AbortWatch::fired(self)
    }
}

impl Drop for AbortWatch {
    fn drop(&mut self) {
        if let Some((watched, slot)) = self.watched.take() {
            unwatch(&watched, &slot);
        }
    }
}

pub struct Fired<'a> {
    watch: &'a AbortWatch,
}

impl Future for Fired<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.watch.is_aborted() {
            return Poll::Ready(());
        }
        if let Some((_, slot)) = &self.watch.watched {
            *slot.borrow_mut() = Some(cx.waker().clone());
        }
        if let Some(stop) = &self.watch.stop {
            let mut waiting = stop.waiting.borrow_mut();
            if !waiting.iter().any(|w| w.will_wake(cx.waker())) {
                waiting.push(cx.waker().clone());
            }
        }
        Poll::Pending
    }
}
