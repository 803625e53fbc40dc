//! Watching the caller's `AbortSignal` without leaking a listener onto it: map clients reuse one
//! signal for hundreds of tiles, so the listener is removed when the call settles.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use wasm_bindgen::closure::Closure;
use wasm_bindgen::{JsCast, JsValue};
use web_sys::AbortSignal;

use crate::platform::Cancel;

#[derive(Default)]
struct Shared {
    fired: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

pub struct AbortWatch {
    signal: Option<AbortSignal>,
    shared: Rc<Shared>,
    listener: Option<Closure<dyn FnMut()>>,
}

impl AbortWatch {
    pub fn new(signal: Option<AbortSignal>) -> AbortWatch {
        let shared = Rc::new(Shared::default());
        let listener = signal.as_ref().filter(|s| !s.aborted()).map(|signal| {
            let on_abort = {
                let shared = shared.clone();
                Closure::<dyn FnMut()>::new(move || {
                    shared.fired.set(true);
                    if let Some(waker) = shared.waker.borrow_mut().take() {
                        waker.wake();
                    }
                })
            };
            // Cannot fail for a real AbortSignal; if it did, `aborted()` polling still works.
            let _ = signal.add_event_listener_with_callback("abort", on_abort.as_ref().unchecked_ref());
            on_abort
        });
        AbortWatch { signal, shared, listener }
    }

    pub fn is_aborted(&self) -> bool {
        self.shared.fired.get() || self.signal.as_ref().is_some_and(AbortSignal::aborted)
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
        if let (Some(signal), Some(listener)) = (&self.signal, &self.listener) {
            let _ = signal.remove_event_listener_with_callback("abort", listener.as_ref().unchecked_ref());
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
        *self.watch.shared.waker.borrow_mut() = Some(cx.waker().clone());
        Poll::Pending
    }
}
