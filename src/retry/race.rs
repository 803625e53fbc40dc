//! Racing two futures without an executor-specific `select!` (pure: the retry loop uses it
//! to bound waits by the deadline and the caller's signal).

use core::future::{poll_fn, Future};
use core::pin::pin;
use core::task::Poll;

pub enum Either<A, B> {
    Left(A),
    Right(B),
}

/// Resolves with whichever future finishes first (the left one on a tie); the other is dropped,
/// which cancels it (timers are cleared, listeners removed).
pub async fn race<A: Future, B: Future>(a: A, b: B) -> Either<A::Output, B::Output> {
    let mut a = pin!(a);
    let mut b = pin!(b);
    poll_fn(|cx| {
        if let Poll::Ready(out) = a.as_mut().poll(cx) {
            return Poll::Ready(Either::Left(out));
        }
        if let Poll::Ready(out) = b.as_mut().poll(cx) {
            return Poll::Ready(Either::Right(out));
        }
        Poll::Pending
    })
    .await
}
