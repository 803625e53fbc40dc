//! Watching the caller's `AbortSignal`. Map clients share one signal across hundreds of tiles,
//! so every call watching the same signal shares one "abort" listener on it (Node warns past ten
//! listeners, and each listener is a closure to allocate), removed when the last call settles.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::AbortSignal;

use crate::platform::Cancel;

type WakerSlot = Rc<RefCell<Option<Waker>>>;

/// One watched signal: its listener and the calls waiting on it.
struct Watched {
    signal: AbortSignal,
    fired: Cell<bool>,
    waiting: RefCell<Vec<WakerSlot>>,
    listener: RefCell<Option<Closure<dyn FnMut()>>>,
}

thread_local! {
    /// Signals with a listener, each shared by the calls watching it: a short list.
    static WATCHED: RefCell<Vec<Rc<Watched>>> = const { RefCell::new(Vec::new()) };
}

fn watch(signal: &AbortSignal) -> Rc<Watched> {
    let found = WATCHED
        .with(|all| all.borrow().iter().find(|w| JsValue::from(&w.signal) == JsValue::from(signal)).cloned());
    if let Some(watched) = found {
        return watched;
    }
    let watched = Rc::new(Watched {
        signal: signal.clone(),
        fired: Cell::new(false),
        waiting: RefCell::new(Vec::new()),
        listener: RefCell::new(None),
    });
    let on_abort = {
        let watched = Rc::downgrade(&watched);
        Closure::<dyn FnMut()>::new(move || {
            if let Some(watched) = watched.upgrade() {
                watched.fired.set(true);
                let slots: Vec<WakerSlot> = watched.waiting.borrow().clone();
                for slot in slots {
                    if let Some(waker) = slot.borrow_mut().take() {
                        waker.wake();
                    }
                }
            }
        })
    };
    // Cannot fail for a real AbortSignal; if it did, `aborted()` polling still works.
    let _ = signal.add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
    *watched.listener.borrow_mut() = Some(on_abort);
    WATCHED.with(|all| all.borrow_mut().push(watched.clone()));
    watched
}

fn unwatch(watched: &Rc<Watched>, slot: &WakerSlot) {
    watched.waiting.borrow_mut().retain(|s| !Rc::ptr_eq(s, slot));
    if watched.waiting.borrow().is_empty() {
        if let Some(listener) = watched.listener.borrow_mut().take() {
            let _ = watched
                .signal
                .remove_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
        }
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
