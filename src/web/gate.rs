//! `UpstreamGateState`: the core's gate ([`crate::host::gate`]) for the `UpstreamGate` Durable Object
//! of tilefetch/worker (pkg/worker/gate.js), which holds one per upstream host. Values in and out
//! by name: the config and each report are read as named fields, verdicts and the state are
//! built by wire.js from named parameters.

use wasm_bindgen::prelude::*;

use super::effects::JsRandom;
use super::js_options::read_entries;
use super::wire::{make_gate_verdict, Named};
use crate::host::gate::{Gate, GateConfig, Outcome, Verdict};
use crate::options::{entries_of, Value};
use crate::retry::platform::Random;

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

    /// May an attempt go now: `{allow, probe, retryAfterMs, reason, state}`. `admit.ok`: how
    /// many of the isolate's attempts got a tile since its last admit (their reports, batched),
    /// the latest `admit.okAgeMs` ago.
    pub fn admit(&mut self, admit: &JsValue, now_ms: f64) -> JsValue {
        if let Ok((entries, _)) = read_entries(admit, "admit") {
            let number = |name: &str| match entries.iter().find(|(k, _)| k == name) {
                Some((_, Value::Number(n))) if n.is_finite() => Some(*n),
                _ => None,
            };
            if let Some(n) = number("ok").filter(|n| *n >= 1.0) {
                self.gate.answered(now_ms, n.min(1000.0) as u32, number("okAgeMs").unwrap_or(0.0));
            }
        }
        let verdict = self.gate.admit(now_ms);
        let state = self.gate.state(now_ms).name();
        match verdict {
            Verdict::Allow { probe } => {
                make_gate_verdict(true, probe, 0.0, if probe { "probe" } else { "ok" }, state)
            }
            Verdict::Refuse { reason, wait_ms } => {
                make_gate_verdict(false, false, wait_ms.ceil(), reason.name(), state)
            }
        }
    }

    /// One attempt's outcome, `{probe, status, retryAfter, date, abandoned}`: `status` null
    /// (and not `abandoned`) is a failure without a response.
    pub fn report(&mut self, report: &JsValue, now_ms: f64) {
        let Ok((entries, _)) = read_entries(report, "report") else { return };
        let field = |name: &str| entries.iter().find(|(k, _)| k == name).map(|(_, v)| v);
        let text = |name: &str| match field(name) {
            Some(Value::Text(t)) => Some(t.as_str()),
            _ => None,
        };
        let probe = matches!(field("probe"), Some(Value::Bool(true)));
        let outcome = match (field("abandoned"), field("status")) {
            (Some(Value::Bool(true)), _) => Outcome::Abandoned,
            (_, Some(Value::Number(n))) if (100.0..=599.0).contains(n) => {
                Outcome::Status { status: *n as u16, retry_after: text("retryAfter"), date: text("date") }
            }
            _ => Outcome::Failed,
        };
        self.gate.report(now_ms, probe, outcome, JsRandom.unit());
    }

    /// A snapshot for tests and debugging.
    pub fn state(&self, now_ms: f64) -> JsValue {
        let counts = self.gate.counts;
        let open_until = self.gate.open_until(now_ms);
        let paused_until = self.gate.paused_until(now_ms);
        let wait = open_until.unwrap_or(now_ms).max(paused_until.unwrap_or(now_ms)) - now_ms;
        let state = Named::new();
        state
            .text("state", Some(self.gate.state(now_ms).name()))
            .number("openUntil", open_until)
            .number("pausedUntil", paused_until)
            .number("retryAfterMs", wait.max(0.0).ceil());
        let counted = [
            ("admitted", counts.admitted),
            ("denied", counts.denied),
            ("ok", counts.ok),
            ("failed", counts.failed),
            ("opened", counts.opened),
        ];
        for (name, count) in counted {
            state.number(name, count as f64);
        }
        state.0
    }
}
