//! `UpstreamGateState`: the core's gate ([`crate::host::gate`]) for the `UpstreamGate` Durable Object
//! of tilefetch/worker (pkg/worker/gate.js), which holds one per upstream host. Values in and out
//! by name: the config is read as the registry's named settings (`GATE_KEYS`), and the messages
//! (an admit, a report, a verdict, the state) are serde structs, read and written by
//! serde-wasm-bindgen (the edge build's script limit is megabytes; a page never loads this).

use serde::{Deserialize, Serialize};
use wasm_bindgen::prelude::*;

use super::effects::JsRandom;
use super::js_options::read_entries;
use crate::host::gate::{Gate, GateConfig, Outcome, Verdict};
use crate::options::entries_of;
use crate::retry::platform::Random;

/// What an isolate says with each admit (pkg/worker/gated-fetch.js): how many of its attempts
/// got a tile since its last admit (their reports, batched), the latest `okAgeMs` ago; the rate
/// limit the newest of them stated, and that attempt's `seq` (its admit's); the attempt's `turn`
/// for the quota, if the gate gave it one.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Admit {
    ok: Option<f64>,
    ok_age_ms: Option<f64>,
    rate_limit: Option<String>,
    rate_limit_seq: Option<f64>,
    turn: Option<f64>,
}

/// One attempt's outcome as an isolate reports it: `status` null (and not `abandoned`) is a
/// failure without a response.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    probe: Option<bool>,
    abandoned: Option<bool>,
    status: Option<f64>,
    retry_after: Option<String>,
    date: Option<String>,
    rate_limit: Option<String>,
    seq: Option<f64>,
}

/// The answer to an admit.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct AdmitVerdict {
    allow: bool,
    probe: bool,
    /// The admitted attempt's number, told back with what its answer states (0: refused).
    seq: f64,
    /// A rate paces the upstream: no attempt goes before its admit is answered.
    paced: bool,
    retry_after_ms: f64,
    reason: &'static str,
    state: &'static str,
    /// A refused attempt's turn for the quota, shown when it asks again (0: none).
    turn: f64,
}

/// A snapshot for tests and debugging.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct GateSnapshot {
    state: &'static str,
    open_until: Option<f64>,
    paused_until: Option<f64>,
    retry_after_ms: f64,
    admitted: f64,
    denied: f64,
    ok: f64,
    failed: f64,
    opened: f64,
}

/// A message read by name; `None` for one that is no object or whose fields have the wrong
/// types: it tells nothing, and is ignored (never a panic).
fn read<T: for<'de> Deserialize<'de>>(value: &JsValue) -> Option<T> {
    serde_wasm_bindgen::from_value(value.clone()).ok()
}

/// A message written by name (an object; `None` fields as `null`).
fn write(value: &impl Serialize) -> JsValue {
    value.serialize(&serde_wasm_bindgen::Serializer::json_compatible()).unwrap_or(JsValue::NULL)
}

/// One upstream host's shared breaker, pause and rate.
#[wasm_bindgen(js_name = UpstreamGateState)]
pub struct UpstreamGateState {
    gate: Gate,
}

#[wasm_bindgen(js_class = UpstreamGateState)]
impl UpstreamGateState {
    /// `config`: `{failureThreshold, openMs, maxOpenMs, ratePerSecond, burst, probeLeaseMs}`;
    /// `nowMs`: epoch ms. Throws a TileError (invalid-options) naming a bad field.
    #[wasm_bindgen(constructor)]
    pub fn new(host: &str, config: &JsValue, now_ms: f64) -> Result<UpstreamGateState, JsValue> {
        let parsed = read_entries(config, "gate")
            .and_then(|(entries, _)| GateConfig::from_entries(&entries_of(&entries)));
        match parsed {
            Ok(config) => Ok(UpstreamGateState { gate: Gate::new(host, &config, now_ms) }),
            Err(error) => Err(super::early_error(error, "")),
        }
    }

    /// May an attempt go now: `{allow, probe, seq, paced, retryAfterMs, reason, state}`. `admit.ok`: how
    /// many of the isolate's attempts got a tile since its last admit (their reports, batched),
    /// the latest `admit.okAgeMs` ago.
    pub fn admit(&mut self, admit: &JsValue, now_ms: f64) -> JsValue {
        let admit: Admit = read(admit).unwrap_or_default();
        let age = admit.ok_age_ms.filter(|age| age.is_finite()).unwrap_or(0.0);
        if let Some(n) = admit.ok.filter(|n| n.is_finite() && *n >= 1.0) {
            self.gate.answered(now_ms, n.min(1000.0) as u32, age);
        }
        if let Some(lines) = &admit.rate_limit {
            // Stated by the latest of those answers.
            self.gate.stated(now_ms, lines, age, seq_of(admit.rate_limit_seq));
        }
        let verdict = self.gate.admit_in_turn(now_ms, seq_of(admit.turn));
        let state = self.gate.state(now_ms).name();
        let paced = self.gate.paced(now_ms);
        write(&match verdict {
            Verdict::Allow { probe } => AdmitVerdict {
                allow: true,
                probe,
                seq: self.gate.admitted() as f64,
                paced,
                retry_after_ms: 0.0,
                reason: if probe { "probe" } else { "ok" },
                state,
                turn: 0.0,
            },
            Verdict::Refuse { reason, wait_ms, turn } => AdmitVerdict {
                allow: false,
                probe: false,
                seq: 0.0,
                paced,
                retry_after_ms: wait_ms.ceil(),
                reason: reason.name(),
                state,
                turn: turn.map_or(0.0, |t| t as f64),
            },
        })
    }

    /// One attempt's outcome, `{probe, status, retryAfter, date, abandoned, rateLimit, seq}`
    /// (`seq`: its admit's): `status` null
    /// (and not `abandoned`) is a failure without a response.
    pub fn report(&mut self, report: &JsValue, now_ms: f64) {
        let Some(report) = read::<Report>(report) else { return };
        if let Some(lines) = &report.rate_limit {
            self.gate.stated(now_ms, lines, 0.0, seq_of(report.seq));
        }
        let outcome = match (report.abandoned, report.status) {
            (Some(true), _) => Outcome::Abandoned,
            (_, Some(n)) if (100.0..=599.0).contains(&n) => Outcome::Status {
                status: n as u16,
                retry_after: report.retry_after.as_deref(),
                date: report.date.as_deref(),
            },
            _ => Outcome::Failed,
        };
        let seq = seq_of(report.seq);
        self.gate.report_attempt(now_ms, report.probe == Some(true), outcome, JsRandom.unit(), seq);
    }

    /// A snapshot for tests and debugging.
    pub fn state(&self, now_ms: f64) -> JsValue {
        let counts = self.gate.counts;
        let open_until = self.gate.open_until(now_ms);
        let paused_until = self.gate.paused_until(now_ms);
        let wait = open_until.unwrap_or(now_ms).max(paused_until.unwrap_or(now_ms)) - now_ms;
        write(&GateSnapshot {
            state: self.gate.state(now_ms).name(),
            open_until,
            paused_until,
            retry_after_ms: wait.max(0.0).ceil(),
            admitted: counts.admitted as f64,
            denied: counts.denied as f64,
            ok: counts.ok as f64,
            failed: counts.failed as f64,
            opened: counts.opened as f64,
        })
    }
}

/// An attempt's number (or turn) as an isolate tells it back: a whole number ≥ 1, or none.
fn seq_of(n: Option<f64>) -> Option<u64> {
    n.filter(|n| n.is_finite() && *n >= 1.0 && n.fract() == 0.0).map(|n| n as u64)
}
