//! Per-host concurrency: at most `limit` attempts in flight, the rest wait in a FIFO or LIFO
//! queue, behind the waiters that may not wait longer (hedges, and calls whose deadline is near:
//! served first, oldest first). A waiter that is dropped (its call aborted) leaves the queue at
//! once; a permit that is dropped frees its slot for the next waiter at once.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

/// `queueOrder`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QueueOrder {
    /// First come, first served.
    Fifo,
    /// Newest first: what a panning map wants, since the newest tiles are the visible ones.
    Lifo,
}

#[derive(Default)]
struct Ticket {
    granted: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

struct Inner {
    limit: usize,
    busy: usize,
    /// How many slots have been freed since the start: how far the attempts sent earlier have got.
    released: u64,
    order: QueueOrder,
    waiting: VecDeque<Rc<Ticket>>,
    /// Served before `waiting`, in arrival order.
    urgent: VecDeque<Rc<Ticket>>,
}

impl Inner {
    fn is_empty(&self) -> bool {
        self.waiting.is_empty() && self.urgent.is_empty()
    }
}

/// One host's concurrency limit and the queue of attempts waiting for a slot.
#[derive(Clone)]
pub struct Slots(Rc<RefCell<Inner>>);

impl Slots {
    /// At most `limit` attempts in flight (at least 1), the rest queued in `order`.
    pub fn new(limit: usize, order: QueueOrder) -> Slots {
        Slots(Rc::new(RefCell::new(Inner {
            limit: limit.max(1),
            busy: 0,
            released: 0,
            order,
            waiting: VecDeque::new(),
            urgent: VecDeque::new(),
        })))
    }

    /// Sets how many attempts may be in flight at once (at least 1): a higher limit lets
    /// waiters in at once; a lower one lets the attempts out finish.
    pub fn set_limit(&self, limit: usize) {
        self.0.borrow_mut().limit = limit.max(1);
        while self.grant_next() {}
    }

    /// How many attempts may be in flight at once.
    pub fn limit(&self) -> usize {
        self.0.borrow().limit
    }

    /// How many slots are taken.
    pub fn in_flight(&self) -> usize {
        self.0.borrow().busy
    }

    /// How many slots have been freed so far (a count that only grows).
    pub fn released(&self) -> u64 {
        self.0.borrow().released
    }

    /// How many attempts are waiting for a slot.
    pub fn queued(&self) -> usize {
        let inner = self.0.borrow();
        inner.waiting.len() + inner.urgent.len()
    }

    /// The order of the queue.
    pub fn order(&self) -> QueueOrder {
        self.0.borrow().order
    }

    /// A slot now, if one is free and nobody is waiting for it.
    pub fn try_acquire(&self) -> Option<Permit> {
        let mut inner = self.0.borrow_mut();
        if inner.busy < inner.limit && inner.is_empty() {
            inner.busy += 1;
            return Some(Permit { slots: self.clone() });
        }
        None
    }

    /// Waits for a slot. Dropping the future before it resolves gives up the place in line.
    pub fn acquire(&self) -> Acquire {
        Acquire { slots: self.clone(), ticket: None, done: false, first: false }
    }

    /// Waits for a slot ahead of every waiter but the ones that came this way before: for a
    /// hedge, which stands in for an attempt that already holds a slot and may be hung, and for a
    /// call whose deadline is near (a LIFO queue must not starve it for newer ones).
    pub fn acquire_next(&self) -> Acquire {
        Acquire { slots: self.clone(), ticket: None, done: false, first: true }
    }

    fn release(&self) {
        {
            let mut inner = self.0.borrow_mut();
            inner.busy = inner.busy.saturating_sub(1);
            inner.released += 1;
        }
        self.grant_next();
    }

    /// Hands a free slot to the next waiter, if there are both; returns whether it did.
    fn grant_next(&self) -> bool {
        let next = {
            let mut inner = self.0.borrow_mut();
            if inner.busy >= inner.limit {
                None
            } else {
                let next = match inner.order {
                    _ if !inner.urgent.is_empty() => inner.urgent.pop_front(),
                    QueueOrder::Fifo => inner.waiting.pop_front(),
                    QueueOrder::Lifo => inner.waiting.pop_back(),
                };
                if next.is_some() {
                    inner.busy += 1;
                }
                next
            }
        };
        let Some(ticket) = next else { return false };
        ticket.granted.set(true);
        if let Some(waker) = ticket.waker.take() {
            waker.wake();
        }
        true
    }
}

/// The future of [`Slots::acquire`]: resolves to a slot.
pub struct Acquire {
    slots: Slots,
    ticket: Option<Rc<Ticket>>,
    done: bool,
    /// Queued where the next free slot goes, not where new waiters go.
    first: bool,
}

/// A slot; dropping it frees the slot.
pub struct Permit {
    slots: Slots,
}

impl Drop for Permit {
    fn drop(&mut self) {
        self.slots.release();
    }
}

impl Future for Acquire {
    type Output = Permit;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Permit> {
        let this = &mut *self;
        match &this.ticket {
            Some(ticket) if ticket.granted.get() => {
                this.done = true;
                return Poll::Ready(Permit { slots: this.slots.clone() });
            }
            Some(ticket) => ticket.waker.set(Some(cx.waker().clone())),
            None => {
                let mut inner = this.slots.0.borrow_mut();
                if inner.busy < inner.limit && inner.is_empty() {
                    inner.busy += 1;
                    drop(inner);
                    this.done = true;
                    return Poll::Ready(Permit { slots: this.slots.clone() });
                }
                let ticket = Rc::new(Ticket::default());
                ticket.waker.set(Some(cx.waker().clone()));
                if this.first {
                    inner.urgent.push_back(ticket.clone());
                } else {
                    inner.waiting.push_back(ticket.clone());
                }
                this.ticket = Some(ticket);
            }
        }
        Poll::Pending
    }
}

impl Drop for Acquire {
    fn drop(&mut self) {
        if self.done {
            return;
        }
        if let Some(ticket) = self.ticket.take() {
            if ticket.granted.get() {
                // Granted while its call was going away: hand the slot on.
                self.slots.release();
            } else {
                let mut inner = self.slots.0.borrow_mut();
                inner.waiting.retain(|t| !Rc::ptr_eq(t, &ticket));
                inner.urgent.retain(|t| !Rc::ptr_eq(t, &ticket));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::pin;
    use std::task::Waker;

    fn poll<F: Future + Unpin>(f: &mut F) -> Option<F::Output> {
        match Pin::new(f).poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Ready(v) => Some(v),
            Poll::Pending => None,
        }
    }

    #[test]
    fn at_most_limit_in_flight_then_fifo() {
        let slots = Slots::new(2, QueueOrder::Fifo);
        let p1 = poll(&mut slots.acquire()).unwrap();
        let p2 = poll(&mut slots.acquire()).unwrap();
        let mut a = slots.acquire();
        let mut b = slots.acquire();
        assert!(poll(&mut a).is_none() && poll(&mut b).is_none());
        assert_eq!((slots.in_flight(), slots.queued()), (2, 2));
        drop(p1);
        assert!(poll(&mut b).is_none(), "b is behind a");
        let pa = poll(&mut a).unwrap();
        drop(p2);
        let pb = poll(&mut b).unwrap();
        assert_eq!((slots.in_flight(), slots.queued()), (2, 0));
        drop((pa, pb));
        assert_eq!(slots.in_flight(), 0);
    }

    #[test]
    fn a_waiter_queued_next_is_served_before_every_other() {
        for order in [QueueOrder::Fifo, QueueOrder::Lifo] {
            let slots = Slots::new(1, order);
            let p = poll(&mut slots.acquire()).unwrap();
            let mut waiting = slots.acquire();
            let mut hedge = slots.acquire_next();
            assert!(poll(&mut waiting).is_none() && poll(&mut hedge).is_none());
            drop(p);
            assert!(poll(&mut waiting).is_none(), "{order:?}: the hedge goes first");
            let ph = poll(&mut hedge).expect("served next");
            drop(ph);
            assert!(poll(&mut waiting).is_some());
        }
    }

    #[test]
    fn waiters_queued_next_go_in_their_own_arrival_order() {
        let slots = Slots::new(1, QueueOrder::Lifo);
        let p = poll(&mut slots.acquire()).unwrap();
        let mut first = slots.acquire_next();
        let mut second = slots.acquire_next();
        let mut newest = slots.acquire();
        assert!(poll(&mut first).is_none() && poll(&mut second).is_none() && poll(&mut newest).is_none());
        assert_eq!(slots.queued(), 3);
        drop(p);
        assert!(poll(&mut second).is_none() && poll(&mut newest).is_none());
        drop(poll(&mut first).expect("the first urgent waiter"));
        assert!(poll(&mut newest).is_none());
        drop(poll(&mut second).expect("then the second"));
        assert!(poll(&mut newest).is_some());
    }

    #[test]
    fn lifo_serves_the_newest_waiter_first() {
        let slots = Slots::new(1, QueueOrder::Lifo);
        let p = poll(&mut slots.acquire()).unwrap();
        let mut old = slots.acquire();
        let mut new = slots.acquire();
        assert!(poll(&mut old).is_none() && poll(&mut new).is_none());
        drop(p);
        assert!(poll(&mut old).is_none());
        assert!(poll(&mut new).is_some());
    }

    #[test]
    fn a_dropped_waiter_leaves_the_queue() {
        let slots = Slots::new(1, QueueOrder::Fifo);
        let p = poll(&mut slots.acquire()).unwrap();
        let mut waiters: Vec<Acquire> = (0..100).map(|_| slots.acquire()).collect();
        for w in &mut waiters {
            assert!(poll(w).is_none());
        }
        assert_eq!(slots.queued(), 100);
        drop(waiters);
        assert_eq!(slots.queued(), 0);
        drop(p);
        assert_eq!(slots.in_flight(), 0);
    }

    #[test]
    fn a_slot_granted_to_a_waiter_that_leaves_is_handed_on() {
        let slots = Slots::new(1, QueueOrder::Fifo);
        let p = poll(&mut slots.acquire()).unwrap();
        let mut a = slots.acquire();
        let mut b = slots.acquire();
        assert!(poll(&mut a).is_none() && poll(&mut b).is_none());
        drop(p); // granted to a, which never polls again
        drop(a);
        assert!(poll(&mut b).is_some());
    }

    #[test]
    fn the_queue_wakes_the_granted_waiter() {
        use std::sync::atomic::{AtomicBool, Ordering};
        use std::sync::Arc;
        struct Flag(AtomicBool);
        impl std::task::Wake for Flag {
            fn wake(self: Arc<Self>) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let slots = Slots::new(1, QueueOrder::Fifo);
        let p = poll(&mut slots.acquire()).unwrap();
        let flag = Arc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        let mut a = pin!(slots.acquire());
        assert!(a.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
        drop(p);
        assert!(flag.0.load(Ordering::SeqCst));
    }
}
