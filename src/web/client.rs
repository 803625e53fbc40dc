//! `TileClient` in the browser: per-host shared state, one default client behind the top-level
//! `fetchTile`, coalescing of identical concurrent calls, `stats()` and `onEvent`.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;
use std::task::{Context, Poll, Waker};

use js_sys::{Function, Uint8Array};
use wasm_bindgen::prelude::*;

use super::abort::{AbortWatch, Stop};
use super::effects::{AbortableSleep, JsClock, JsRandom, Timer};
use super::js_options::{build_request, read_entries, read_urls, BuiltRequest};
use super::transport::{holds_requests_per_host, FetchTransport, WebBody};
use super::wire::{
    add_host_stats, make_attempt_event, make_breaker_event, make_cors_event, make_give_up_event,
    make_hedge_event, make_host_settings, make_pacing_event, make_pause_event, make_queue_event,
    make_retry_event, make_retry_info, make_tile, tile_head, Named, TileHead,
};
use super::{early_error, failure_to_js};
use crate::client::{
    flight_key_of, recent, tile_key, Callers, FlightTable, HostRegistry, HostSnapshot, Joinable, RecentTiles,
};
use crate::host::state::{Hold, SharedHost};
use crate::host::{host_key, HostState};
use crate::options::client_config::ClientConfig;
use crate::options::{entries_of, Options, WhenAbandoned};
use crate::redact::redact_url;
use crate::response::byte_range::whole_to_range;
use crate::response::freshness::{reuse_ms, FreshnessHeaders};
use crate::retry::platform::Clock;
use crate::retry::platform::Transport;
use crate::retry::race::{race, Either};
use crate::retry::serving::{lets_land, ConnectionQueue};
use crate::retry::{fetch_with_retries, Cause, Delivered, Event, GaveUp, Runtime};
use crate::text::pieces;
use crate::Error;

pub struct ClientInner {
    config: ClientConfig,
    headers: Option<JsValue>,
    /// The client's `fetch`, which a call's own replaces.
    fetch: Option<Function>,
    on_event: Option<Function>,
    hosts: RefCell<HostRegistry>,
    flights: RefCell<FlightTable<Flight>>,
    /// Tiles delivered lately, handed out again to identical calls (`memoryCacheBytes`).
    recent: RefCell<RecentTiles<SharedTile>>,
}

impl ClientInner {
    pub fn new(config: &JsValue) -> Result<ClientInner, Error> {
        let (entries, js) = read_entries(config, "config")?;
        let config = ClientConfig::from_entries(&entries_of(&entries))?;
        Ok(ClientInner {
            recent: RefCell::new(RecentTiles::new(config.memory_cache_bytes)),
            config,
            headers: js.headers,
            fetch: js.fetch,
            on_event: js.on_event,
            hosts: RefCell::default(),
            flights: RefCell::default(),
        })
    }

    fn host(&self, key: &str) -> SharedHost {
        let make = || {
            let host = HostState::new(key, &self.config.host_config(key), JsClock.now_ms());
            if holds_requests_per_host() {
                host.in_a_browser()
            } else {
                host
            }
        };
        self.hosts.borrow_mut().get_or_add(key, make)
    }

    /// One call of `fetchTile`; its deadline counts from `called_ms` (`performance.now()`), which
    /// is earlier than now when the call waited for the module to load (pkg/browser.js).
    pub async fn fetch(
        self: Rc<Self>,
        url: JsValue,
        options: JsValue,
        called_ms: Option<f64>,
    ) -> Result<JsValue, JsValue> {
        let prepared = self.prepare(&url, &options).map_err(|e| {
            // Redacted only when needed: a call that prepares well shows its resolved URL.
            early_error(e, &url.as_string().map(|u| redact_url(&u)).unwrap_or_default())
        })?;
        let Prepared { options, url_lines, route, request, headers, signal, on_retry, own_fetch } = prepared;
        let own_abort = AbortWatch::new(signal);
        if own_abort.is_aborted() {
            route[0].borrow_mut().counters.aborted += 1;
            return Err(caller_error(Error::Aborted, Some(own_abort.reason()), 0, 0.0, &url_lines));
        }
        let now = JsClock.now_ms();
        let called = called_ms.filter(|at| at.is_finite()).map_or(now, |at| at.min(now));
        let kept_key = tile_key(&url_lines, &options, &headers);
        let key = flight_key_of(&kept_key, options.cache);
        if recent::serves(options.cache, own_fetch, options.max_age_s) {
            let kept = self.recent.borrow_mut().get(&kept_key, now);
            if let Some(tile) = kept {
                {
                    let mut primary = route[0].borrow_mut();
                    primary.counters.requests += 1;
                    primary.counters.successes += 1;
                    primary.counters.from_memory += 1;
                }
                return Ok(make_tile(&tile.head, &tile.data, false, 0, 0.0, tile.empty));
            }
        }
        let keeps = recent::keeps(options.cache, options.max_age_s) && self.recent.borrow().is_on();
        let own_end = called + options.deadline_ms;
        let existing = self.flights.borrow().joinable(&key, own_end, options.deadline_ms);
        let joined = existing.is_some();
        let flight = match existing {
            Some(flight) => {
                let mut primary = route[0].borrow_mut();
                primary.counters.requests += 1;
                primary.counters.coalesced += 1;
                flight
            }
            None => {
                let when_abandoned = if keeps && holds_requests_per_host() {
                    options.when_abandoned
                } else {
                    WhenAbandoned::Abort
                };
                let flight = Rc::new(Flight::new(own_end, when_abandoned));
                self.flights.borrow_mut().start(key.clone(), flight.clone());
                let client = self.clone();
                let task = flight.clone();
                let run = FlightRun {
                    called,
                    options: options.clone(),
                    route: route.clone(),
                    request,
                    on_retry,
                    url_lines: url_lines.clone(),
                    keeps,
                    own_fetch,
                };
                super::task::spawn(async move {
                    let outcome = client.run_flight(&task, run).await;
                    client.flights.borrow_mut().finish(&key, &task);
                    if let (Ok(tile), true) = (&outcome, keeps) {
                        client.keep(kept_key, tile, &task);
                    }
                    task.finish(outcome);
                });
                flight
            }
        };
        let _caller = Caller::join(&flight);
        // The shared loop ends by its own deadline (with the last failure as cause); a caller
        // needs a timer of its own when its deadline ends sooner than the loop's, and when it
        // joined another call's flight: in workerd a request that waits with no timer or fetch
        // of its own counts as hung and is canceled, even though another request will wake it.
        let own_deadline = async {
            if joined || own_end < flight.ends_at {
                Timer::new(own_end - JsClock.now_ms()).await
            } else {
                std::future::pending::<()>().await
            }
        };
        match race(flight.wait(), race(own_abort.fired(), own_deadline)).await {
            Either::Left(Ok(tile)) => Ok(flight.tile_for_caller(&tile)),
            Either::Left(Err(error)) => Err(error),
            Either::Right(Either::Left(())) => {
                let elapsed = JsClock.now_ms() - called;
                let reason = Some(own_abort.reason());
                Err(caller_error(Error::Aborted, reason, flight.attempts.get(), elapsed, &url_lines))
            }
            Either::Right(Either::Right(())) => {
                let error = Error::Deadline { deadline_ms: options.deadline_ms };
                let elapsed = JsClock.now_ms() - called;
                Err(caller_error(error, None, flight.attempts.get(), elapsed, &url_lines))
            }
        }
    }

    /// Keeps a delivered `tile` for identical calls, for as long as its response allows (else
    /// forgets any older one); its flight's callers then each get a copy (the kept bytes are
    /// never handed out).
    fn keep(&self, key: String, tile: &SharedTile, flight: &Flight) {
        let mut recent = self.recent.borrow_mut();
        match tile.reuse_ms {
            Some(ms) => {
                let bytes = tile.data.length() as usize;
                let kept = SharedTile { head: tile_head(&tile.head), data: tile.data.clone(), ..*tile };
                if recent.put(&key, kept, bytes, JsClock.now_ms() + ms) {
                    flight.body_taken.set(true);
                }
            }
            None => recent.remove(&key),
        }
    }

    fn prepare(&self, url: &JsValue, options: &JsValue) -> Result<Prepared, Error> {
        let (entries, js) = read_entries(options, "options")?;
        let entries = entries_of(&entries);
        // The call's options over the client's: enough to expand `{s}` and find the host. A
        // host with rules of its own starts from its own options.
        let options = self.config.call_options(None, &entries)?;
        let url_lines = read_urls(url, options.subdomains.as_deref())?;
        let mut hosts = Vec::new();
        for url in pieces(&url_lines, b'\n') {
            hosts.push(host_key(url));
        }
        // `pieces` yields at least one piece, so the first mirror is always there.
        let options = match hosts.first().filter(|primary| self.config.rule(primary).is_some()) {
            Some(primary) => self.config.call_options(Some(primary), &entries)?,
            None => options,
        };
        options.check_range()?;
        // Borrowed, not moved out of `js`: each early return then drops `js` whole.
        let headers = js.headers.as_ref().or(self.headers.as_ref());
        let fetch = js.fetch.as_ref().or(self.fetch.as_ref());
        let (request, sent) = build_request(&url_lines, &options, headers, fetch)?;
        let route = hosts.iter().map(|host| self.host(host)).collect();
        Ok(Prepared {
            options,
            url_lines,
            route,
            request,
            headers: sent,
            signal: js.signal,
            on_retry: js.on_retry,
            own_fetch: js.fetch.is_some(),
        })
    }

    async fn run_flight(&self, flight: &Flight, run: FlightRun) -> Result<SharedTile, JsValue> {
        let abort = AbortWatch::of_stop(flight.stop.clone());
        let abandon = AbortWatch::of_stop(flight.abandon.clone());
        let transport = FetchTransport::new(&run.request, &abort, run.own_fetch);
        let sleeper = AbortableSleep { abort: &abandon, while_out: Some((&abort, &flight.out)) };
        let effects = Runtime {
            transport: &transport,
            clock: &JsClock,
            sleeper: &sleeper,
            random: &JsRandom,
            cancel: &abandon,
        };
        let connections = transport.connections_per_host();
        let on_event = |event: Event| {
            if let Event::Attempt { attempt, .. } | Event::Hedge { attempt, .. } = &event {
                flight.attempts.set(*attempt);
            }
            match &event {
                Event::Attempt { host, .. } if flight.when_abandoned != WhenAbandoned::Abort => {
                    let host = run.route.iter().find(|h| h.borrow().name == *host);
                    *flight.sent.borrow_mut() = host.map(|h| AttemptOut {
                        host: h.clone(),
                        queue: ConnectionQueue::at_send(h, connections),
                        connections,
                        sent_ms: JsClock.now_ms(),
                    });
                    flight.out.set(true);
                }
                Event::Retry { .. } => flight.out.set(false),
                _ => {}
            }
            if let (Event::Retry { info, .. }, Some(callback)) = (&event, &run.on_retry) {
                let info = make_retry_info(
                    info.attempt,
                    info.delay_ms,
                    info.reason,
                    info.status,
                    info.retry_after_ms,
                );
                // A throwing observer must not turn a loadable tile into a failure.
                let _ = callback.call1(&JsValue::UNDEFINED, &info);
            }
            if let Some(callback) = &self.on_event {
                let _ = callback.call1(&JsValue::UNDEFINED, &event_to_js(&event));
            }
        };
        match fetch_with_retries(&run.options, &run.route, &effects, run.called, on_event).await {
            Ok(Delivered { body, empty, attempts, elapsed_ms }) => {
                // Read only for a call that keeps its tile (an empty one is never kept).
                let reuse_ms = if run.keeps && !empty { reuse_ms_of(&body) } else { None };
                let WebBody { response, data, .. } = body;
                let data = match run
                    .options
                    .range
                    .and_then(|r| whole_to_range(&r, response.status(), data.length()))
                {
                    // A copy, not a view: a kept range holds only its own bytes, not the
                    // whole body a server that ignores Range sent.
                    Some((start, end)) => data.slice(start as u32, end as u32),
                    None => data,
                };
                // A response is a head (its status and headers); a kept tile holds a head of its
                // own (`keep`).
                let head = response.unchecked_into::<TileHead>();
                Ok(SharedTile { head, data, empty, attempts, elapsed_ms, reuse_ms })
            }
            // Every caller has gone (that is what stopped it): nobody reads the error, and a JS
            // Error costs a stack capture, which adds up when a map drops a hundred tiles at once.
            Err(_) if flight.callers.count() == 0 => Err(JsValue::UNDEFINED),
            Err(gave_up) => Err(give_up_to_js(gave_up, &run.url_lines)),
        }
    }

    /// What calls to `host` run with (its rule over the client's settings over the preset's).
    pub fn host_settings(&self, host: &str) -> JsValue {
        let config = self.config.host_config(host);
        let options = self.config.options_for(host);
        make_host_settings(
            config.max_concurrent as u32,
            config.breaker.half_open_probes,
            options.deadline_ms,
            config.breaker.max_open_ms,
        )
    }

    pub fn stats(&self) -> JsValue {
        // Both clocks read once: every time of the snapshot maps to the epoch alike.
        let (now, epoch) = (JsClock.now_ms(), JsClock.epoch_ms());
        let to_epoch = |t: f64| epoch + (t - now);
        // Every host is read before any JS runs (a setter the page put on Object.prototype may
        // call back into this client while no borrow is held).
        let entries: Vec<_> = self
            .hosts
            .borrow()
            .iter()
            .map(|host| {
                let mut h = host.borrow_mut();
                (h.name.clone(), HostSnapshot::of(&mut h, now, to_epoch))
            })
            .collect();
        let stats = js_sys::Object::new();
        for (name, s) in entries {
            let host_stats = Named::new();
            let counts = [
                ("requests", s.requests),
                ("attempts", s.attempts),
                ("retries", s.retries),
                ("successes", s.successes),
                ("aborted", s.aborted),
                ("coalesced", s.coalesced),
                ("fromMemory", s.from_memory),
                ("hedges", s.hedges),
                ("hedgesWon", s.hedges_won),
                ("inFlight", s.in_flight as u64),
                ("queued", s.queued as u64),
                ("maxInFlight", s.max_in_flight as u64),
            ];
            for (field, count) in counts {
                host_stats.number(field, count as f64);
            }
            let give_ups = host_stats.object("giveUps");
            for (kind, n) in &s.give_ups {
                give_ups.number(kind, *n as f64);
            }
            host_stats
                .object("breaker")
                .text("state", Some(s.breaker_state))
                .number("changedAt", s.breaker_changed_at);
            host_stats
                .number("retryTokens", s.retry_tokens)
                .number("pausedUntil", s.paused_until)
                .number("rateLimitPerSecond", s.rate_limit_per_second);
            host_stats.object("latencyMs").number("p50", s.p50).number("p95", s.p95).number("p99", s.p99);
            host_stats.flag("corsRefused", s.cors_refused);
            match &s.stated_limit {
                None => {
                    host_stats.number("statedLimit", None);
                }
                Some(limit) => {
                    host_stats
                        .object("statedLimit")
                        .text("policy", limit.policy.as_deref())
                        .number("quota", limit.quota)
                        .number("windowS", limit.window_s)
                        .number("remaining", limit.remaining)
                        .number("resetS", limit.reset_s)
                        .number("pacedPerSecond", limit.paced_per_second)
                        .number("until", limit.until);
                }
            }
            let host_stats = host_stats.0;
            add_host_stats(&stats, &name, &host_stats);
        }
        stats.into()
    }
}

struct Prepared {
    options: Options,
    /// The mirrors' URLs, one per line (as resolved, and as sent).
    url_lines: String,
    route: Vec<SharedHost>,
    /// Its inputs, init, `fetch` (the call's, else the client's; none: the global one) and
    /// `maxBytes`, kept in JS.
    request: BuiltRequest,
    /// The headers the request carries, as `name:value;` each.
    headers: String,
    signal: Option<web_sys::AbortSignal>,
    on_retry: Option<Function>,
    /// The call has a `fetch` of its own (see [`recent::serves`]).
    own_fetch: bool,
}

struct FlightRun {
    /// When the leader called: the shared loop's deadline counts from here.
    called: f64,
    options: Options,
    route: Vec<SharedHost>,
    request: BuiltRequest,
    on_retry: Option<Function>,
    /// The call's URLs, one per line: an error shows the first, redacted (`shown_url`), made
    /// only for an error: most calls never need it.
    url_lines: String,
    /// Whether its tile is kept for identical calls (`recent::keeps`, the client keeping tiles).
    keeps: bool,
    /// Whether the call brought a `fetch` of its own.
    own_fetch: bool,
}

/// A tile shared by the callers of one flight.
#[derive(Clone)]
struct SharedTile {
    head: TileHead,
    data: Uint8Array,
    /// For how long it may be handed out again from the client's recent tiles (`None`: not,
    /// and any older one is forgotten).
    reuse_ms: Option<f64>,
    empty: bool,
    attempts: u32,
    elapsed_ms: f64,
}

/// A flight's attempt out, as [`lets_land`] reads it.
struct AttemptOut {
    host: SharedHost,
    /// Its place in the queue for a connection.
    queue: Option<ConnectionQueue>,
    /// The platform's connections per host (`Transport::connections_per_host`).
    connections: Option<usize>,
    sent_ms: f64,
}

/// One network retry loop shared by identical concurrent calls.
struct Flight {
    outcome: RefCell<Option<Result<SharedTile, JsValue>>>,
    wakers: RefCell<Vec<Waker>>,
    callers: Callers,
    /// When the shared loop's deadline ends (the leader's).
    ends_at: f64,
    /// Attempts the shared loop has sent so far.
    attempts: Cell<u32>,
    /// Stops the shared loop when every caller has gone: aborts its requests.
    stop: Rc<Stop>,
    /// Gives the shared loop up when every caller has gone, but lets an attempt out land (see
    /// [`Flight::lets_land`]): it starts nothing more (no retry, hedge or wait).
    abandon: Rc<Stop>,
    /// Whether an attempt out may land once its callers have gone (`whenAbandoned`, in a page,
    /// for a tile the client keeps, so that it serves the next identical call; else `Abort`).
    when_abandoned: WhenAbandoned,
    /// Whether an attempt is out now.
    out: Cell<bool>,
    /// The attempt out.
    sent: RefCell<Option<AttemptOut>>,
    /// Whether the body as received has gone (to the first caller, or to the recent tiles):
    /// every caller after it gets a copy.
    body_taken: Cell<bool>,
}

impl Flight {
    fn new(ends_at: f64, when_abandoned: WhenAbandoned) -> Flight {
        Flight {
            ends_at,
            outcome: RefCell::new(None),
            wakers: RefCell::new(Vec::new()),
            callers: Callers::default(),
            attempts: Cell::new(0),
            stop: Rc::default(),
            abandon: Rc::default(),
            when_abandoned,
            out: Cell::new(false),
            sent: RefCell::new(None),
            body_taken: Cell::new(false),
        }
    }

    /// Whether, its callers all gone, the attempt it has out lands rather than being aborted
    /// (`whenAbandoned` `"land"` or `"yield"`, when the core's rule says so: [`lets_land`]). The
    /// next view's ask for it joins it, and a pan back finds it kept, where an abort would have
    /// wasted the request the server has.
    fn lets_land(&self) -> bool {
        self.out.get()
            && self.sent.borrow().as_ref().is_some_and(|sent| {
                lets_land(
                    self.when_abandoned,
                    &sent.host,
                    sent.queue.as_ref(),
                    sent.connections,
                    sent.sent_ms,
                    JsClock.now_ms(),
                )
            })
    }

    fn finish(&self, outcome: Result<SharedTile, JsValue>) {
        *self.outcome.borrow_mut() = Some(outcome);
        for waker in self.wakers.borrow_mut().drain(..) {
            waker.wake();
        }
    }

    fn wait(&self) -> FlightWait<'_> {
        FlightWait { flight: self }
    }

    /// The first caller gets the body as received; later ones a copy each (see `makeTile`).
    fn tile_for_caller(&self, tile: &SharedTile) -> JsValue {
        let first = !self.body_taken.replace(true);
        make_tile(&tile.head, &tile.data, first, tile.attempts, tile.elapsed_ms, tile.empty)
    }
}

struct FlightWait<'a> {
    flight: &'a Flight,
}

impl Future for FlightWait<'_> {
    type Output = Result<SharedTile, JsValue>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        if let Some(outcome) = self.flight.outcome.borrow().as_ref() {
            return Poll::Ready(outcome.clone());
        }
        self.flight.wakers.borrow_mut().push(cx.waker().clone());
        Poll::Pending
    }
}

impl Joinable for Flight {
    fn ends_at(&self) -> f64 {
        self.ends_at
    }

    fn is_stopped(&self) -> bool {
        self.stop.is_stopped()
    }
}

/// A caller's membership of a flight: the last one to leave an unfinished flight aborts it.
struct Caller {
    flight: Rc<Flight>,
}

impl Caller {
    fn join(flight: &Rc<Flight>) -> Caller {
        flight.callers.join();
        // A flight left to land its attempt is the caller's again (nothing has read the
        // abandonment yet but a hedge not sent: the attempt is still out).
        flight.abandon.resume();
        Caller { flight: flight.clone() }
    }
}

impl Drop for Caller {
    fn drop(&mut self) {
        let flight = &self.flight;
        if flight.callers.leave() && flight.outcome.borrow().is_none() {
            let lands = flight.lets_land();
            flight.abandon.stop();
            if !lands {
                flight.stop.stop();
            }
        }
    }
}

/// For how long a tile that came in `body` may be handed out again.
fn reuse_ms_of(body: &WebBody) -> Option<f64> {
    let freshness = FreshnessHeaders {
        cache_control: body.cache_control.as_deref(),
        age: body.age.as_deref(),
        expires: body.expires.as_deref(),
    };
    reuse_ms(&freshness, JsClock.epoch_ms())
}

fn give_up_to_js(gave_up: GaveUp<JsValue>, url_lines: &str) -> JsValue {
    failure_to_js(&gave_up.failure, gave_up.attempts, gave_up.elapsed_ms, &shown_url(url_lines))
}

/// What an error shows of a call's URLs (one per line): the first, redacted.
fn shown_url(url_lines: &str) -> String {
    redact_url(pieces(url_lines, b'\n').next().unwrap_or(""))
}

/// A caller that leaves its flight early (its own signal or deadline), with the attempts the
/// shared loop had sent by then.
fn caller_error(
    error: Error,
    cause: Option<JsValue>,
    attempts: u32,
    elapsed_ms: f64,
    url_lines: &str,
) -> JsValue {
    let failure = crate::retry::Failure { error, cause: cause.map(Cause::Platform) };
    failure_to_js(&failure, attempts, elapsed_ms, &shown_url(url_lines))
}

fn event_to_js(event: &Event) -> JsValue {
    match event {
        Event::Attempt { host, attempt, probe } => make_attempt_event(host, *attempt, *probe),
        Event::Retry { host, info } => {
            make_retry_event(host, info.attempt, info.delay_ms, info.reason, info.status, info.retry_after_ms)
        }
        Event::Queue { host, hold, wait_ms } => {
            let hold = match hold {
                None => "slot",
                Some(Hold::Pause) => "pause",
                Some(Hold::Breaker) => "breaker",
                Some(Hold::Rate) => "rate",
                Some(Hold::Quota) => "quota",
            };
            make_queue_event(host, hold, *wait_ms)
        }
        Event::Breaker { host, state } => make_breaker_event(host, state.name()),
        Event::Pause { host, until_ms } => {
            make_pause_event(host, JsClock.epoch_ms() + (until_ms - JsClock.now_ms()))
        }
        Event::Pacing { host, per_second, until_ms } => {
            make_pacing_event(host, *per_second, JsClock.epoch_ms() + (until_ms - JsClock.now_ms()))
        }
        Event::Hedge { host, attempt, after_ms } => make_hedge_event(host, *attempt, *after_ms),
        Event::CorsRefused { host } => make_cors_event(host),
        Event::GiveUp { host, kind, attempts } => make_give_up_event(host, kind, *attempts),
    }
}
