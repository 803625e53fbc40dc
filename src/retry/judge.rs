//! What an attempt's outcome means for its call and its host: a tile, or the failure (retryable
//! with the server's wait, or final) and the report its host learns from.

use std::rc::Rc;

use super::outcome::{Cause, Event, Failure};
use crate::host::limit::Answer;
use crate::host::slots::Permit;
use crate::host::state::{Change, Report, SharedHost, StatedBy};
use crate::options::Options;
use crate::response::classify::{classify, is_stale, ResponseFacts, Verdict};
use crate::response::rate_limit::stated;
use crate::retry::platform::{Attempt, Clock};
use crate::text::decimal_value;
use crate::Error;

/// An attempt on its way: where it went, what it holds, and when it left.
pub(super) struct Sent {
    pub(super) mirror: usize,
    /// The host slot it holds; `None` once a hedge to the same host has taken it over.
    pub(super) permit: Option<Permit>,
    pub(super) probe: bool,
    pub(super) name: Rc<str>,
    pub(super) budget: f64,
    /// The attempt timeout it went with (the host's learned one, or `attemptTimeoutMs`): a
    /// `budget` below it was cut by the deadline.
    pub(super) timeout: f64,
    pub(super) at_ms: f64,
    /// When the host began to serve it, as far as the client can tell: `at_ms`, or later when
    /// it waited for a connection behind the client's earlier requests (see `serving`).
    pub(super) started_ms: f64,
    /// Whether the platform held it back for one of its few connections to the host (by the
    /// client's count; see `serving`); `None` where the platform holds none back.
    pub(super) held_back: Option<bool>,
    /// Held back, and answered before it could have had a connection: fewer attempts sent
    /// before it had ended than its place behind the connections (see `serving`); `None` when
    /// the transport's answers do not tell (`Transport::tells_connections`) or it was not read.
    pub(super) overtook: Option<bool>,
    /// The host's concurrency limit when it was sent (see `AdaptiveLimit`).
    pub(super) limit_at_send: usize,
    /// Its number among the attempts sent to its host (`counters.attempts` once it was counted):
    /// an answer's stated quota is newer than another's when its attempt went later.
    pub(super) seq: u64,
}

/// What an attempt's outcome means, before its host learns from it.
pub(super) enum Judged<B, C> {
    /// A tile (`stale`: a cache has held it longer than `maxAgeS`).
    Tile { body: B, empty: bool, stale: bool },
    /// No tile: what the host learns, and the failure (retryable with the server's wait, or final).
    NotTile { report: Report, verdict: Result<(Failure<C>, Option<f64>), Failure<C>> },
}

pub(super) fn judge<B, C>(
    outcome: Attempt<B, C>,
    options: &Options,
    sent: &Sent,
    epoch_ms: f64,
) -> Judged<B, C> {
    let budget = sent.budget;
    let (report, verdict) = match outcome {
        Attempt::Aborted => (Report::Abandoned, Err(Failure::of(Error::Aborted))),
        Attempt::TimedOut => {
            // Cut short by this call's deadline, the attempt says nothing about the host.
            let report = if budget < sent.timeout { Report::Abandoned } else { Report::Transient };
            (report, Ok((Failure::of(Error::Timeout { after_ms: budget }), None)))
        }
        // The same answer on every attempt: final, and the host is alive.
        Attempt::CorsRefused => (Report::CorsRefused, Err(Failure::of(Error::Cors))),
        // The host is serving; the URL is wrong. Final, and nothing held against the host.
        // With `range`, only a whole resource can be that large (the range itself is within it).
        // A whole resource where a range was asked for (a 2xx that is no 206): the server does
        // not serve ranges. Anything else that large is a body too large, range or not.
        Attempt::TooLarge { bytes, declared, status } => (
            Report::Alive,
            Err(Failure::of(match options.range {
                Some(_) if (200..300).contains(&status) && status != 206 => {
                    Error::RangeUnsupported { max_bytes: options.max_bytes }
                }
                _ => Error::TooLarge { bytes, max_bytes: options.max_bytes, declared },
            })),
        ),
        Attempt::Failed { message, cause } => (
            Report::Transient,
            Ok((Failure { error: Error::Network { message }, cause: Some(Cause::Platform(cause)) }, None)),
        ),
        Attempt::Response(facts, body) => match classify(&facts, options, epoch_ms) {
            Verdict::Deliver { empty } => {
                return Judged::Tile { body, empty, stale: is_stale(&facts, options) }
            }
            Verdict::Reject(error) => (Report::Alive, Err(Failure::of(error))),
            Verdict::Retry { error, retry_after_ms } => {
                let throttled = facts.status == 429 || (facts.status == 503 && retry_after_ms.is_some());
                let report = if throttled {
                    Report::Throttled {
                        wait_ms: retry_after_ms.map(|w| w.min(options.retry_after_max_ms)),
                        too_many: facts.status == 429,
                        sent_ms: sent.at_ms,
                    }
                } else {
                    Report::Transient
                };
                (report, Ok((Failure::of(error), retry_after_ms)))
            }
        },
    };
    Judged::NotTile { report, verdict }
}

impl<B, C> Judged<B, C> {
    /// A tile, or the caller's abort: either ends the race of an attempt and its hedge.
    pub(super) fn ends_race(&self) -> bool {
        match self {
            Judged::Tile { .. } => true,
            Judged::NotTile { verdict, .. } => matches!(verdict, Err(f) if f.error == Error::Aborted),
        }
    }
}

/// Judges an attempt that landed; a tile's time teaches its host what a healthy answer takes
/// (unless the request went before its attempt: its time is not known), and any answer's
/// stated rate limit how to pace it.
pub(super) fn landed<B, C>(
    sent: Sent,
    outcome: Attempt<B, C>,
    route: &[SharedHost],
    options: &Options,
    clock: &impl Clock,
    on_event: &mut impl FnMut(Event),
) -> (Sent, Judged<B, C>) {
    let now = clock.now_ms();
    let host = &route[sent.mirror];
    let timed = !matches!(&outcome, Attempt::Response(facts, _) if facts.sent_early);
    if let Attempt::Response(facts, _) = &outcome {
        take_stated_limit(facts, host, options, now, clock.epoch_ms(), &sent, on_event);
    }
    let mut judged = judge(outcome, options, &sent, clock.epoch_ms());
    match &mut judged {
        Judged::Tile { .. } if timed => {
            let mut host = host.borrow_mut();
            host.counters.attempt_latency.record(now - sent.started_ms);
            // From when it was sent: time waiting for a connection is what the limit reads.
            host.tile_answered(
                sent.seq,
                Answer {
                    at_ms: now,
                    took_ms: now - sent.at_ms,
                    held_back: sent.held_back,
                    overtook: sent.overtook,
                    limit_at_send: sent.limit_at_send,
                },
            );
        }
        Judged::NotTile { report, verdict: Ok((_, retry_after_ms @ Some(_))) } => {
            weigh_retry_after(report, retry_after_ms, host, options, now);
        }
        // A tile answered to a request sent before its attempt: its time is not known.
        Judged::Tile { .. } | Judged::NotTile { .. } => {}
    }
    (sent, judged)
}

/// The rate limit an answer states, for its host to pace by. Not from a cache's copy (an `Age`
/// over 0): its quota is the one the host stated when the copy was made, as the draft says.
fn take_stated_limit(
    facts: &ResponseFacts,
    host: &SharedHost,
    options: &Options,
    now: f64,
    epoch_ms: f64,
    sent: &Sent,
    on_event: &mut impl FnMut(Event),
) {
    let Some(fields) = facts.fields.rate_limit.as_deref() else { return };
    // Read as `is_stale` reads it.
    let cached = facts
        .fields
        .age
        .as_deref()
        .and_then(|age| decimal_value(age.trim_ascii()))
        .is_some_and(|age| age > 0);
    let Some(stated) = stated(fields, epoch_ms).filter(|_| !cached) else { return };
    // The answering attempt still holds its slot.
    let others = host.borrow().slots.in_flight().saturating_sub(1);
    let change = host.borrow_mut().on_stated(
        now,
        stated,
        StatedBy { seq: sent.seq, sent_ms: sent.at_ms },
        others,
        options.retry_after_max_ms,
    );
    if let Some(Change::Pacing { per_second, until_ms }) = change {
        on_event(Event::Pacing { host: sent.name.clone(), per_second, until_ms });
    }
}

/// Evidence over a header. A Retry-After that this call's deadline could never wait for (an hour,
/// a day) from a host that is answering other requests right now is not believed: the response
/// is retried like one without the header, and the host is not paused (one bad header would
/// otherwise fail every tile of a healthy host). From a host that answers nothing else it is
/// believed (a real quota): the call rejects `rate-limited` and the host pauses, until an answer
/// in flight contradicts it.
fn weigh_retry_after(
    report: &mut Report,
    retry_after_ms: &mut Option<f64>,
    host: &SharedHost,
    options: &Options,
    now: f64,
) {
    let Some(wait) = *retry_after_ms else { return };
    // Implausible for any call of these options, whenever it lands: not just for what is left of
    // this one (late in a call even a 1 s header would not fit, and is still honest).
    if wait.min(options.retry_after_max_ms) < options.deadline_ms {
        return;
    }
    if host.borrow().is_answering(now) {
        *retry_after_ms = None;
        *report = match *report {
            Report::Throttled { too_many: true, sent_ms, .. } => {
                Report::Throttled { wait_ms: None, too_many: true, sent_ms }
            }
            _ => Report::Transient,
        };
    } else {
        host.borrow_mut().doubt_pause();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::state::HostState;
    use crate::host::HostConfig;
    use crate::options::Value;
    use crate::response::classify::ResponseFacts;
    use crate::response::fields::ReadFields;

    const PNG: &[u8] = b"\x89PNG\r\n\x1a\n....\0\0\0\0IEND\xaeB`\x82";

    fn sent(budget: f64) -> Sent {
        let (timeout, at_ms, started_ms) = (4_000.0, 5.0, 5.0);
        Sent {
            mirror: 0,
            permit: None,
            probe: false,
            name: "h".into(),
            budget,
            timeout,
            at_ms,
            started_ms,
            held_back: None,
            overtook: None,
            limit_at_send: 16,
            seq: 1,
        }
    }

    fn response(status: u16, retry_after: Option<&str>, body: &[u8]) -> Attempt<(), ()> {
        let facts = ResponseFacts {
            status,
            fields: ReadFields {
                content_type: Some("image/png".into()),
                retry_after: retry_after.map(str::to_string),
                ..ReadFields::default()
            },
            body_len: body.len(),
            head: body.to_vec(),
            tail: body.to_vec(),
            ..ResponseFacts::default()
        };
        Attempt::Response(facts, ())
    }

    /// The report and, for no tile, the failure's kind and whether it may be retried.
    fn judged(outcome: Attempt<(), ()>, budget: f64) -> (Option<Report>, &'static str, bool) {
        let options = Options::parse(&[]).unwrap();
        match judge(outcome, &options, &sent(budget), 0.0) {
            Judged::Tile { .. } => (None, "tile", false),
            Judged::NotTile { report, verdict: Ok((failure, _)) } => {
                (Some(report), failure.error.kind(), true)
            }
            Judged::NotTile { report, verdict: Err(failure) } => (Some(report), failure.error.kind(), false),
        }
    }

    /// A clock stopped at `.0` ms (its epoch at 0).
    struct Stopped(f64);

    impl Clock for Stopped {
        fn now_ms(&self) -> f64 {
            self.0
        }
        fn epoch_ms(&self) -> f64 {
            0.0
        }
    }

    /// A statement paces its host, unless a cache held the answer (an `Age` over 0).
    #[test]
    fn a_stated_limit_is_taken_from_a_fresh_answer_only() {
        let options = Options::parse(&[]).unwrap();
        let clock = Stopped(0.0);
        for (age, taken) in [(None, true), (Some("0"), true), (Some(" 00 "), true), (Some("5"), false)] {
            let route = [HostState::new("h", &HostConfig::DEFAULT, 0.0).shared()];
            let Attempt::Response(mut facts, ()) = response(200, None, PNG) else { unreachable!() };
            facts.fields.age = age.map(str::to_string);
            facts.fields.rate_limit = Some("ratelimit: \"p\";r=0;t=9\n".into());
            let mut events = Vec::new();
            landed(
                sent(4000.0),
                Attempt::<(), ()>::Response(facts, ()),
                &route,
                &options,
                &clock,
                &mut |e| events.push(e),
            );
            assert_eq!(route[0].borrow().stated(1.0).is_some(), taken, "Age {age:?}");
        }
    }

    #[test]
    fn an_answer_sent_before_its_attempt_teaches_no_answer_time() {
        let options = Options::parse(&[]).unwrap();
        for (sent_early, recorded) in [(false, 1), (true, 0)] {
            let route = [HostState::new("h", &HostConfig::DEFAULT, 0.0).shared()];
            let Attempt::Response(mut facts, ()) = response(200, None, PNG) else { unreachable!() };
            facts.sent_early = sent_early;
            let (_, judged) = landed(
                sent(4000.0),
                Attempt::<(), ()>::Response(facts, ()),
                &route,
                &options,
                &Stopped(500.0),
                &mut |_| {},
            );
            assert!(matches!(judged, Judged::Tile { .. }), "still a tile");
            assert_eq!(
                route[0].borrow().counters.attempt_latency.count(),
                recorded,
                "sent early: {sent_early}"
            );
        }
    }

    #[test]
    fn each_outcome_means_a_report_and_a_failure() {
        let full = 4000.0;
        assert_eq!(judged(response(200, None, PNG), full), (None, "tile", false));
        assert_eq!(judged(Attempt::Aborted, full), (Some(Report::Abandoned), "aborted", false));
        assert_eq!(judged(Attempt::TimedOut, full), (Some(Report::Transient), "timeout", true));
        // Cut short by the call's deadline, not the attempt timeout: nothing said of the host.
        assert_eq!(judged(Attempt::TimedOut, 100.0), (Some(Report::Abandoned), "timeout", true));
        assert_eq!(judged(Attempt::CorsRefused, full), (Some(Report::CorsRefused), "cors", false));
        let too_large = Attempt::TooLarge { bytes: 1e9, declared: true, status: 200 };
        assert_eq!(judged(too_large, full), (Some(Report::Alive), "too-large", false));
        // Asked for a range, the whole resource is what was too large.
        let range =
            Value::Record(vec![("offset".into(), Value::Number(0.0)), ("length".into(), Value::Number(9.0))]);
        let ranged = Options::parse(&[("range", range)]).unwrap();
        for (status, kind) in [(200, "range-unsupported"), (206, "too-large"), (502, "too-large")] {
            let too_large = Attempt::<(), ()>::TooLarge { bytes: 1e9, declared: false, status };
            match judge(too_large, &ranged, &sent(full), 0.0) {
                Judged::NotTile { report: Report::Alive, verdict: Err(failure) } => {
                    assert_eq!(failure.error.kind(), kind, "{status}")
                }
                _ => panic!("a body over maxBytes is final"),
            }
        }
        let failed = Attempt::Failed { message: "reset".into(), cause: () };
        assert_eq!(judged(failed, full), (Some(Report::Transient), "network", true));
        assert_eq!(judged(response(404, None, b""), full), (Some(Report::Alive), "http", false));
        assert_eq!(judged(response(500, None, b""), full), (Some(Report::Transient), "http", true));
        let refused = Report::Throttled { wait_ms: Some(2000.0), too_many: true, sent_ms: 5.0 };
        assert_eq!(judged(response(429, Some("2"), b""), full), (Some(refused), "http", true));
        let unavailable = Report::Throttled { wait_ms: Some(2000.0), too_many: false, sent_ms: 5.0 };
        assert_eq!(judged(response(503, Some("2"), b""), full), (Some(unavailable), "http", true));
        assert_eq!(judged(response(503, None, b""), full), (Some(Report::Transient), "http", true));
    }

    #[test]
    fn a_platform_failure_is_kept_as_the_cause() {
        let options = Options::parse(&[]).unwrap();
        let failed = Attempt::<(), &str>::Failed { message: "reset".into(), cause: "the TypeError" };
        let Judged::NotTile { verdict: Ok((failure, None)), .. } =
            judge(failed, &options, &sent(4000.0), 0.0)
        else {
            panic!("a network failure is retried")
        };
        assert!(matches!(failure.cause, Some(Cause::Platform("the TypeError"))));
    }

    /// "Evidence over a header": an hour's Retry-After is dropped when the host answers others,
    /// and doubted (kept, the pause marked doubtful) when it answers nothing else.
    #[test]
    fn an_implausible_retry_after_is_weighed_against_what_the_host_does() {
        let options = Options::parse(&[("deadlineMs", Value::Number(6000.0))]).unwrap();
        let hour = Some(3_600_000.0);
        let throttled = Report::Throttled { wait_ms: hour, too_many: true, sent_ms: 0.0 };

        let quiet = HostState::new("quiet.example", &HostConfig::DEFAULT, 0.0).shared();
        let (mut report, mut wait) = (throttled, hour);
        weigh_retry_after(&mut report, &mut wait, &quiet, &options, 10.0);
        assert_eq!((report, wait), (throttled, hour), "believed: nothing contradicts it");

        let busy = HostState::new("busy.example", &HostConfig::DEFAULT, 0.0).shared();
        busy.borrow_mut().report(5.0, false, Report::Alive, 0.5);
        let (mut report, mut wait) = (throttled, hour);
        weigh_retry_after(&mut report, &mut wait, &busy, &options, 10.0);
        assert_eq!(wait, None, "not believed from a host that answers");
        assert_eq!(report, Report::Throttled { wait_ms: None, too_many: true, sent_ms: 0.0 });

        let (mut report, mut wait) = (throttled, Some(2000.0));
        weigh_retry_after(&mut report, &mut wait, &busy, &options, 10.0);
        assert_eq!(wait, Some(2000.0), "a wait the call could make is always believed");
    }
}
