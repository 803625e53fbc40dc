//! The `TileClient` config: fetchTile options and per-host settings for every host, and
//! overrides per `host[:port]`, validated into a [`ClientConfig`]. Nested fields are named by
//! their path in errors (`breaker.openMs`, `hosts["tiles.example.com"].deadlineMs`).

use crate::host::breaker::BreakerConfig;
use crate::host::budget::BudgetConfig;
use crate::host::slots::QueueOrder;
use crate::host::HostConfig;
use crate::options::registry::{Scope, MEMORY_CACHE_BYTES};
use crate::options::validate::{millis, one_of, unknown_among, wrong_type};
use crate::options::{entries_of, Entry, Key, Options, Preset, Value, KEYS};
use crate::text::format::{concat, decimal_text};
use crate::Error;

pub use crate::options::registry::{BREAKER_KEYS, BUDGET_KEYS, CLIENT_KEYS, HOST_KEYS};
/// Where the fetchTile option `key` may be set besides a call, if it is one.
fn scope_of(key: &str) -> Option<Scope> {
    Key::named(key).map(Key::scope)
}

/// One `hosts` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct HostRule {
    /// The `host[:port]` it applies to, lowercased.
    pub host: String,
    /// fetchTile options for calls to this host: the client's with the host's over them.
    pub options: Options,
    /// Per-host settings for this host: the client's with the host's over them.
    pub config: HostConfig,
}

/// A validated `TileClient` config.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientConfig {
    /// fetchTile options for calls to every host without a rule.
    pub options: Options,
    /// Per-host settings for every host without a rule.
    pub host: HostConfig,
    /// The `hosts` rules, in the order given.
    pub hosts: Vec<HostRule>,
    /// Whether `onEvent` was given (the wasm layer keeps the function).
    pub has_on_event: bool,
    /// `memoryCacheBytes`: the bound of the client's recently delivered tiles.
    pub memory_cache_bytes: usize,
}

impl ClientConfig {
    /// Validates the entries of a config object. The first problem found is returned as
    /// [`Error::InvalidOptions`] naming the field by its path.
    pub fn parse(entries: &[(&str, Value)]) -> Result<ClientConfig, Error> {
        ClientConfig::from_entries(&entries_of(entries))
    }

    /// [`ClientConfig::parse`] for borrowed entries.
    pub fn from_entries(entries: &[Entry]) -> Result<ClientConfig, Error> {
        let mut defaults = Vec::new();
        let mut host_entries = Vec::new();
        let mut hosts_value = None;
        let mut has_on_event = false;
        let mut memory_cache = None;
        for &(key, value) in entries {
            match key {
                "hosts" => hosts_value = Some(value),
                "memoryCacheBytes" => memory_cache = Some(value),
                "onEvent" => match value {
                    Value::Absent => {}
                    Value::Function => has_on_event = true,
                    other => return Err(wrong_type(key, "a function", other)),
                },
                k if scope_of(k) == Some(Scope::Call) && !matches!(value, Value::Absent) => {
                    return Err(Error::invalid_options(k, "belongs to one call: pass it to client.fetchTile"))
                }
                k if HOST_KEYS.contains(&k) => host_entries.push((k, value)),
                k if scope_of(k).is_some() => defaults.push((k, value)),
                k => return Err(unknown_client_key(k)),
            }
        }
        let options = Options::preset(Preset::Interactive).with(&defaults)?;
        let host = host_config(base_host_config(options.preset), &host_entries, "")?;

        let mut hosts = Vec::new();
        match hosts_value {
            None | Some(Value::Absent) => {}
            Some(Value::Record(rules)) => {
                for (name, rule) in rules {
                    hosts.push(host_rule(name, rule, &options, host)?);
                }
            }
            Some(other) => return Err(wrong_type("hosts", "an object keyed by host[:port]", other)),
        }
        let memory_cache_bytes = match memory_cache {
            None | Some(Value::Absent) => {
                MEMORY_CACHE_BYTES.default.number(matches!(options.preset, Preset::Batch)) as usize
            }
            Some(value) => count("memoryCacheBytes", value, 0, 1 << 30)? as usize,
        };
        Ok(ClientConfig { options, host, hosts, has_on_event, memory_cache_bytes })
    }

    /// The rule for `host` (as [`crate::host::host_key`] gives it), if any.
    pub fn rule(&self, host: &str) -> Option<&HostRule> {
        self.hosts.iter().find(|rule| rule.host == host)
    }

    /// The per-host settings of `host` (as [`crate::host::host_key`] gives it).
    pub fn host_config(&self, host: &str) -> HostConfig {
        self.rule(host).map_or(self.host, |rule| rule.config)
    }

    /// The options a call to `host` starts from (the call's own go over them with
    /// [`Options::with`]).
    pub fn options_for(&self, host: &str) -> &Options {
        self.rule(host).map_or(&self.options, |rule| &rule.options)
    }

    /// The options of a call with `entries` whose primary host is `host`: the call's over the
    /// host's rule's over the client's. `None` before the host is known (enough to expand `{s}`
    /// in the URL, which finds the host). Only a host with a rule costs a second layering.
    pub fn call_options(&self, host: Option<&str>, entries: &[Entry<'_>]) -> Result<Options, Error> {
        match host {
            Some(host) => self.options_for(host).with(entries),
            None => self.options.with(entries),
        }
    }
}

fn base_host_config(preset: Preset) -> HostConfig {
    match preset {
        Preset::Interactive => HostConfig::DEFAULT,
        Preset::Batch => HostConfig { breaker: BreakerConfig::BATCH, ..HostConfig::DEFAULT },
    }
}

fn unknown_client_key(key: &str) -> Error {
    unknown_among(key, &[&KEYS, &HOST_KEYS, &CLIENT_KEYS])
}

fn host_rule(name: &str, rule: &Value, client: &Options, base: HostConfig) -> Result<HostRule, Error> {
    let path = concat(&["hosts[\"", crate::text::first_chars(name, 80), "\"]"]);
    let within = |error: Error| nested(&path, error);
    let Value::Record(fields) = rule else {
        return Err(wrong_type(&path, "an object of options", rule));
    };
    let mut entries = Vec::new();
    let mut host_entries = Vec::new();
    for (key, value) in fields {
        match key.as_str() {
            k if HOST_KEYS.contains(&k) => host_entries.push((k, value)),
            k => match scope_of(k) {
                Some(Scope::Host) => entries.push((k, value)),
                Some(Scope::Call | Scope::Client) => {
                    return Err(within(Error::invalid_options(k, "cannot be set per host")))
                }
                None => return Err(within(unknown_client_key(k))),
            },
        }
    }
    let options = client.with(&entries).map_err(within)?;
    let preset_changed = entries.iter().any(|(k, _)| *k == "preset");
    let start = if preset_changed { base_host_config(options.preset) } else { base };
    let config = host_config(start, &host_entries, &path)?;
    Ok(HostRule { host: name.to_ascii_lowercase(), options, config })
}

/// Prefixes an invalid-options field with where it sits (`breaker` → `hosts["h"].breaker`).
fn nested(path: &str, error: Error) -> Error {
    match error {
        Error::InvalidOptions { field, message } if !path.is_empty() => {
            Error::InvalidOptions { field: concat(&[path, ".", &field]), message }
        }
        other => other,
    }
}

fn host_config(config: HostConfig, entries: &[Entry], path: &str) -> Result<HostConfig, Error> {
    host_fields(config, entries).map_err(|e| nested(path, e))
}

fn host_fields(mut config: HostConfig, entries: &[Entry]) -> Result<HostConfig, Error> {
    for &(key, value) in entries {
        if matches!(value, Value::Absent) {
            continue;
        }
        match key {
            "maxConcurrent" => {
                config.max_concurrent = count(key, value, 1, 100_000)? as usize;
                config.fixed_concurrency = true;
            }
            "queueOrder" => {
                config.queue_order = match value {
                    Value::Text(s) if s == "fifo" => QueueOrder::Fifo,
                    Value::Text(s) if s == "lifo" => QueueOrder::Lifo,
                    other => return Err(one_of(key, &["fifo", "lifo"], other)),
                }
            }
            "breaker" => {
                let fields = record(key, value, "an object such as {failureThreshold: 5, openMs: 500}")?;
                config.breaker = breaker(config.breaker, fields).map_err(|e| nested(key, e))?;
            }
            "retryBudget" => {
                let fields = record(key, value, "an object such as {ratio: 0.2, minPerSecond: 5}")?;
                config.budget = budget(config.budget, fields).map_err(|e| nested(key, e))?;
            }
            "learnRate" => match value {
                Value::Bool(b) => config.learn_rate = *b,
                other => return Err(wrong_type(key, "a boolean", other)),
            },
            // Only HOST_KEYS reach here; an error, not a panic, should that ever change.
            other => return Err(unknown_among(other, &[&HOST_KEYS])),
        }
    }
    Ok(config)
}

fn record<'v>(key: &str, value: &'v Value, expected: &str) -> Result<&'v [(String, Value)], Error> {
    match value {
        Value::Record(fields) => Ok(fields),
        other => Err(wrong_type(key, expected, other)),
    }
}

fn breaker(mut config: BreakerConfig, fields: &[(String, Value)]) -> Result<BreakerConfig, Error> {
    for (key, value) in fields {
        if matches!(value, Value::Absent) {
            continue;
        }
        match key.as_str() {
            "failureThreshold" => config.failure_threshold = count(key, value, 1, 1_000_000)?,
            "openMs" => config.open_ms = millis(key, value, true)?,
            "halfOpenProbes" => config.half_open_probes = count(key, value, 1, 1000)?,
            "maxOpenMs" => config.max_open_ms = millis(key, value, true)?,
            k => return Err(unknown_among(k, &[&BREAKER_KEYS])),
        }
    }
    config.max_open_ms = config.max_open_ms.max(config.open_ms);
    Ok(config)
}

fn budget(mut config: BudgetConfig, fields: &[(String, Value)]) -> Result<BudgetConfig, Error> {
    for (key, value) in fields {
        if matches!(value, Value::Absent) {
            continue;
        }
        let number = match value {
            Value::Number(n) if n.is_finite() && *n >= 0.0 => *n,
            other => return Err(wrong_type(key, "a finite number ≥ 0", other)),
        };
        match key.as_str() {
            "ratio" => config.ratio = number,
            "minPerSecond" => config.min_per_second = number,
            k => return Err(unknown_among(k, &[&BUDGET_KEYS])),
        }
    }
    Ok(config)
}

fn count(key: &str, value: &Value, min: u32, max: u32) -> Result<u32, Error> {
    match value {
        Value::Number(n) if n.fract() == 0.0 && *n >= f64::from(min) && *n <= f64::from(max) => Ok(*n as u32),
        other => Err(wrong_type(
            key,
            &concat(&[
                "an integer from ",
                &decimal_text(u64::from(min)),
                " to ",
                &decimal_text(u64::from(max)),
            ]),
            other,
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(fields: &[(&str, Value)]) -> Value {
        Value::Record(fields.iter().map(|(k, v)| (k.to_string(), v.clone())).collect())
    }
    fn n(v: f64) -> Value {
        Value::Number(v)
    }
    fn field(result: Result<ClientConfig, Error>) -> String {
        match result {
            Err(Error::InvalidOptions { field, .. }) => field,
            other => panic!("expected invalid-options, got {other:?}"),
        }
    }

    #[test]
    fn a_call_layers_its_options_over_its_hosts_rule_over_the_clients() {
        let c = ClientConfig::parse(&[
            ("deadlineMs", n(5_000.0)),
            ("baseDelayMs", n(400.0)),
            ("hosts", rec(&[("slow.example", rec(&[("deadlineMs", n(9_000.0))]))])),
        ])
        .unwrap();
        let call = [("baseDelayMs", n(200.0))];
        let call = entries_of(&call);
        let before_host = c.call_options(None, &call).unwrap();
        assert_eq!((before_host.deadline_ms, before_host.base_delay_ms), (5_000.0, 200.0));
        let ruled = c.call_options(Some("slow.example"), &call).unwrap();
        assert_eq!((ruled.deadline_ms, ruled.base_delay_ms), (9_000.0, 200.0), "the rule, then the call");
        let other = c.call_options(Some("fast.example"), &[]).unwrap();
        assert_eq!((other.deadline_ms, other.base_delay_ms), (5_000.0, 400.0), "no rule: the client's");
    }

    /// The registry's host settings are what an empty config holds: given explicitly (nested
    /// where the name is dotted), each one changes nothing, under either preset.
    #[test]
    fn each_declared_host_setting_is_what_an_empty_config_holds() {
        use crate::options::registry::{DefaultValue, HOST_SETTINGS};
        for preset in ["interactive", "batch"] {
            let chosen = ("preset", Value::Text(preset.into()));
            let base = ClientConfig::parse(std::slice::from_ref(&chosen)).unwrap();
            for setting in HOST_SETTINGS {
                let value = match setting.default {
                    DefaultValue::Number(..) => n(setting.default.number(preset == "batch")),
                    DefaultValue::Text(..) => Value::Text(setting.default.text(false).into()),
                    DefaultValue::Bool(flag) => Value::Bool(flag),
                    other => panic!(
                        "{}: a host setting's default is a number, text or boolean: {other:?}",
                        setting.name()
                    ),
                };
                let entry = match setting.object {
                    "" => (setting.key, value),
                    object => (object, rec(&[(setting.key, value)])),
                };
                let explicit = ClientConfig::parse(&[chosen.clone(), entry]).unwrap();
                // A `maxConcurrent` set, even to its default, fixes the limit (it does not adapt).
                let host = HostConfig { fixed_concurrency: false, ..explicit.host };
                assert_eq!(host, base.host, "{} under {preset}", setting.name());
            }
        }
    }

    #[test]
    fn an_empty_config_has_the_documented_defaults() {
        let c = ClientConfig::parse(&[]).unwrap();
        assert_eq!(c.host, HostConfig::DEFAULT);
        assert_eq!(c.host.max_concurrent, 16);
        assert_eq!(c.host.breaker, BreakerConfig::INTERACTIVE);
        assert_eq!(c.host.budget, BudgetConfig { ratio: 0.5, min_per_second: 10.0 });
        assert!(c.hosts.is_empty() && !c.has_on_event);
    }

    #[test]
    fn memory_cache_bytes_follows_the_preset_unless_set() {
        assert_eq!(ClientConfig::parse(&[]).unwrap().memory_cache_bytes, 16 << 20);
        let batch = ClientConfig::parse(&[("preset", Value::Text("batch".into()))]).unwrap();
        assert_eq!(batch.memory_cache_bytes, 0);
        let set =
            ClientConfig::parse(&[("preset", Value::Text("batch".into())), ("memoryCacheBytes", n(4096.0))]);
        assert_eq!(set.unwrap().memory_cache_bytes, 4096);
        for bad in [n(-1.0), n(0.5), Value::Text("16MB".into())] {
            match ClientConfig::parse(&[("memoryCacheBytes", bad)]) {
                Err(Error::InvalidOptions { field, .. }) => assert_eq!(field, "memoryCacheBytes"),
                other => panic!("{other:?}"),
            }
        }
        let per_host =
            ClientConfig::parse(&[("hosts", rec(&[("a.example", rec(&[("memoryCacheBytes", n(1.0))]))]))]);
        assert!(matches!(per_host, Err(Error::InvalidOptions { .. })), "{per_host:?}");
    }

    #[test]
    fn the_issue_example_parses() {
        let c = ClientConfig::parse(&[
            ("preset", Value::Text("interactive".into())),
            (
                "hosts",
                rec(&[(
                    "Tiles.Example.com",
                    rec(&[
                        ("maxConcurrent", n(16.0)),
                        ("baseDelayMs", n(500.0)),
                        ("deadlineMs", n(8000.0)),
                        (
                            "breaker",
                            rec(&[
                                ("failureThreshold", n(5.0)),
                                ("openMs", n(5000.0)),
                                ("halfOpenProbes", n(1.0)),
                            ]),
                        ),
                        ("retryBudget", rec(&[("ratio", n(0.2)), ("minPerSecond", n(5.0))])),
                    ]),
                )]),
            ),
            ("onEvent", Value::Function),
        ])
        .unwrap();
        let config = c.host_config("tiles.example.com");
        assert_eq!(config.breaker.open_ms, 5000.0);
        assert_eq!(config.breaker.max_open_ms, 5000.0, "raised to openMs");
        assert!(c.has_on_event);
        let merged =
            c.options_for("tiles.example.com").with(&entries_of(&[("deadlineMs", n(3000.0))])).unwrap();
        assert_eq!((merged.base_delay_ms, merged.deadline_ms), (500.0, 3000.0));
        let other = c.options_for("elsewhere").with(&[]).unwrap();
        assert_eq!(other.base_delay_ms, 100.0);
    }

    #[test]
    fn a_batch_client_gets_batch_breakers() {
        let c = ClientConfig::parse(&[("preset", Value::Text("batch".into()))]).unwrap();
        assert_eq!(c.host.breaker, BreakerConfig::BATCH);
    }

    #[test]
    fn bad_config_names_the_field_by_its_path() {
        let cases: Vec<(Vec<(&str, Value)>, &str)> = vec![
            (vec![("maxconcurrent", n(3.0))], "maxconcurrent"),
            (vec![("maxConcurrent", n(0.0))], "maxConcurrent"),
            (vec![("maxConcurrent", n(2.5))], "maxConcurrent"),
            (vec![("queueOrder", Value::Text("random".into()))], "queueOrder"),
            (vec![("breaker", rec(&[("openMs", n(-1.0))]))], "breaker.openMs"),
            (vec![("breaker", rec(&[("openms", n(1.0))]))], "breaker.openms"),
            (vec![("breaker", n(5.0))], "breaker"),
            (vec![("retryBudget", rec(&[("ratio", n(f64::NAN))]))], "retryBudget.ratio"),
            (vec![("hosts", rec(&[("x", rec(&[("deadlinems", n(1.0))]))]))], "hosts[\"x\"].deadlinems"),
            (
                vec![("hosts", rec(&[("x", rec(&[("breaker", rec(&[("openMs", n(0.0))]))]))]))],
                "hosts[\"x\"].breaker.openMs",
            ),
            (vec![("hosts", rec(&[("x", n(1.0))]))], "hosts[\"x\"]"),
            (vec![("hosts", n(1.0))], "hosts"),
            (vec![("signal", Value::AbortSignal)], "signal"),
            (vec![("hosts", rec(&[("x", rec(&[("headers", Value::Object)]))]))], "hosts[\"x\"].headers"),
            (vec![("onEvent", n(1.0))], "onEvent"),
            (vec![("deadlineMs", n(-5.0))], "deadlineMs"),
        ];
        for (entries, expected) in cases {
            let shown = format!("{entries:?}");
            assert_eq!(field(ClientConfig::parse(&entries)), expected, "{shown}");
        }
    }

    #[test]
    fn unknown_client_keys_get_suggestions() {
        let err = ClientConfig::parse(&[("maxconcurrent", n(3.0))]).unwrap_err();
        assert!(err.to_string().contains("did you mean `maxConcurrent`"), "{err}");
    }
}
