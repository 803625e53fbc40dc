//! Prints the option registry (`src/options/registry.rs`) as JSON, for the build
//! (`scripts/options-from-registry.mjs` writes the options' `.d.ts`, the adapters' list of names
//! and the options table of `docs/reference.md` from it) and for the tests that check the
//! package against it.
//!
//! Run: `cargo run --quiet --example option_registry`.

use serde_json::{json, Value};
use tilefetch::options::{DefaultValue, SPECS};

/// A default as JavaScript writes it, under `batch` or not; `null` for one that is not set.
fn as_json(default: DefaultValue, batch: bool) -> Value {
    match default {
        DefaultValue::Number(..) => json!(default.number(batch)),
        DefaultValue::Text(..) => json!(default.text(batch)),
        DefaultValue::Statuses(codes) => json!(codes),
        DefaultValue::Labels(lines) => json!(lines.split('\n').collect::<Vec<_>>()),
        DefaultValue::Unset(_) => Value::Null,
    }
}

fn main() {
    let options: Vec<Value> = SPECS
        .iter()
        .map(|spec| {
            let mut entry = json!({
                "name": spec.name,
                "type": spec.ts_type,
                "default": as_json(spec.default, false),
                "doc": spec.doc,
            });
            if as_json(spec.default, true) != entry["default"] {
                entry["batchDefault"] = as_json(spec.default, true);
            }
            if let DefaultValue::Unset(meaning) = spec.default {
                entry["whenUnset"] = json!(meaning);
            }
            entry
        })
        .collect();
    println!(
        "{}",
        serde_json::to_string_pretty(&json!({ "fetchTile": options })).expect("plain JSON values")
    );
}
