//! Prints the option registry (`src/options/registry.rs`) as JSON, for the build
//! (`scripts/options-from-registry.mjs` writes the options' `.d.ts`, the adapters' list of names
//! and the options tables of `docs/` from it) and for the tests that check the package against it;
//! with it, the response fields a stated rate limit is read from (the edge gate's isolates send them).
//!
//! Run: `cargo run --quiet --example option_registry`.

use serde_json::{json, Value};
use tilefetch::options::registry::{Scope, CLIENT_SETTINGS, GATE_KEYS, HOST_SETTINGS};
use tilefetch::options::{DefaultValue, SPECS};

/// A default as JavaScript writes it, under `batch` or not; `null` for one that is not set.
fn as_json(default: DefaultValue, batch: bool) -> Value {
    match default {
        DefaultValue::Number(..) => json!(default.number(batch)),
        DefaultValue::Text(..) => json!(default.text(batch)),
        DefaultValue::Statuses(codes) => json!(codes),
        DefaultValue::Bool(flag) => json!(flag),
        DefaultValue::Labels(lines) => json!(lines.split('\n').collect::<Vec<_>>()),
        DefaultValue::Unset(_) => Value::Null,
    }
}

/// One option's or setting's declaration: `batchDefault` only where the batch preset differs,
/// `whenUnset` only for a default that is not set.
fn declaration(name: &str, ts_type: &str, default: DefaultValue, doc: &str) -> Value {
    let mut entry = json!({ "name": name, "type": ts_type, "default": as_json(default, false), "doc": doc });
    if as_json(default, true) != entry["default"] {
        entry["batchDefault"] = as_json(default, true);
    }
    if let DefaultValue::Unset(meaning) = default {
        entry["whenUnset"] = json!(meaning);
    }
    entry
}

fn main() {
    let options: Vec<Value> = SPECS
        .iter()
        .map(|spec| {
            let mut entry = declaration(spec.name, spec.ts_type, spec.default, spec.doc);
            entry["scope"] = json!(match spec.scope {
                Scope::Call => "call",
                Scope::Client => "client",
                Scope::Host => "host",
            });
            entry
        })
        .collect();
    let settings = |list: &[tilefetch::options::registry::Setting]| -> Vec<Value> {
        list.iter().map(|s| declaration(&s.name(), s.ts_type, s.default, s.doc)).collect()
    };
    let registry = json!({
        "fetchTile": options,
        "hostSettings": settings(&HOST_SETTINGS),
        "clientSettings": settings(&CLIENT_SETTINGS),
        "gateKeys": GATE_KEYS,
        "rateLimitFields": tilefetch::response::rate_limit::FIELDS,
    });
    println!("{}", serde_json::to_string_pretty(&registry).expect("plain JSON values"));
}
