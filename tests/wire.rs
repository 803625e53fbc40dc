//! The JS⇄wasm boundary agrees with itself: every declaration in `src/web/*.rs` of a snippet
//! function, of a property read from a JS object, and of a code table is checked against the JS
//! snippet it names (`#[wasm_bindgen(module = "/src/web/X.js")]`), name by name. A parameter
//! renamed or moved on one side, a property the Rust side reads that the JS typedef does not
//! promise, a code that differs: each fails here, not on a map.
//!
//! The rules, for contributors:
//! - an extern `fn f(a_b: T, …)` (js_name or the camelCase of its name) needs
//!   `export function f(aB, …)` in its snippet, with the same parameters in the same order;
//! - an extern `type T` with getters needs `@typedef {object} T` in its snippet whose
//!   `@property` names are exactly the getters' (js_name or camelCase);
//! - an enum whose doc says "On the wire: `NAME` in X.js" needs `export const NAME =
//!   Object.freeze({ … })` there with the same variants (camelCase) and the same codes;
//! - every function a snippet exports is declared by the Rust side.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn web_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src/web")
}

/// `retry_after_ms` → `retryAfterMs`.
fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// `abortSignal` → `AbortSignal`.
fn pascal(camel: &str) -> String {
    let mut chars = camel.chars();
    chars.next().map(|c| c.to_uppercase().chain(chars).collect()).unwrap_or_default()
}

/// The text between the bracket at `open` and its partner, and the index after the partner.
fn bracketed(text: &str, open: usize) -> (&str, usize) {
    let bytes = text.as_bytes();
    let (o, c) = match bytes[open] {
        b'(' => (b'(', b')'),
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        other => panic!("not a bracket: {}", other as char),
    };
    let mut depth = 0;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        if b == o {
            depth += 1;
        } else if b == c {
            depth -= 1;
            if depth == 0 {
                return (&text[open + 1..i], i + 1);
            }
        }
    }
    panic!("unbalanced bracket at {open}");
}

/// Splits a parameter list at the commas outside brackets.
fn split_params(list: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut current = String::new();
    for c in list.chars() {
        match c {
            '(' | '<' | '[' | '{' => depth += 1,
            ')' | '>' | ']' | '}' => depth -= 1,
            _ => {}
        }
        if c == ',' && depth == 0 {
            out.push(std::mem::take(&mut current));
        } else {
            current.push(c);
        }
    }
    out.push(current);
    out.into_iter().map(|p| p.trim().to_string()).filter(|p| !p.is_empty()).collect()
}

fn attribute_value(attributes: &str, key: &str) -> Option<String> {
    let at = attributes.find(&format!("{key} = "))? + key.len() + 3;
    let rest = &attributes[at..];
    let end = rest.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

/// What the Rust side declares of one snippet.
#[derive(Default, Debug)]
struct RustSide {
    /// JS name → parameter names (camelCase), in order.
    functions: BTreeMap<String, Vec<String>>,
    /// Type → the property names its getters read.
    types: BTreeMap<String, BTreeSet<String>>,
    /// Where each declaration is, for messages.
    places: BTreeMap<String, String>,
}

/// Every `#[wasm_bindgen(module = "/src/web/X.js")] extern "C" { … }` block under src/web, by
/// snippet file name.
fn rust_declarations() -> BTreeMap<String, RustSide> {
    let mut sides: BTreeMap<String, RustSide> = BTreeMap::new();
    for entry in fs::read_dir(web_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        let text = fs::read_to_string(&path).unwrap();
        let marker = "#[wasm_bindgen(module = \"/src/web/";
        let mut from = 0;
        while let Some(found) = text[from..].find(marker) {
            let start = from + found + marker.len();
            let module = text[start..start + text[start..].find('"').unwrap()].to_string();
            let block_open = start + text[start..].find("extern \"C\" {").unwrap() + "extern \"C\" ".len();
            let (block, after) = bracketed(&text, block_open);
            from = after;
            let side = sides.entry(module).or_default();
            read_block(block, &file, side);
        }
    }
    sides
}

fn read_block(block: &str, file: &str, side: &mut RustSide) {
    let mut attributes = String::new();
    let mut rest = block;
    loop {
        let rest_trimmed = rest.trim_start();
        if rest_trimmed.is_empty() {
            break;
        }
        rest = rest_trimmed;
        if rest.starts_with("///") || rest.starts_with("//") {
            rest = &rest[rest.find('\n').map_or(rest.len(), |n| n + 1)..];
        } else if rest.starts_with("#[") {
            let end = rest.find("]\n").expect("attribute ends its line") + 1;
            attributes.push_str(&rest[..end]);
            rest = &rest[end..];
        } else {
            let end = rest.find(';').expect("declaration ends with ;") + 1;
            let item = &rest[..end];
            rest = &rest[end..];
            let item = item.trim_start_matches("pub ").trim();
            if let Some(name) = item.strip_prefix("type ") {
                side.types.entry(name.trim_end_matches(';').trim().to_string()).or_default();
            } else if let Some(signature) = item.strip_prefix("fn ") {
                let name = &signature[..signature.find('(').unwrap()];
                let open = signature.find('(').unwrap();
                let (params, _) = bracketed(signature, open);
                let params = split_params(params);
                let js_name = attribute_value(&attributes, "js_name").unwrap_or_else(|| camel(name));
                if attributes.contains("method") {
                    let this = params.first().expect("a method has `this`");
                    let ty = this.split(':').nth(1).unwrap().trim().trim_start_matches('&').to_string();
                    assert!(
                        attributes.contains("getter"),
                        "{file}: method `{name}` on {ty}: only getters cross by name; use a snippet function"
                    );
                    side.types.entry(ty.clone()).or_default().insert(js_name.clone());
                    side.places.insert(format!("{ty}.{js_name}"), file.to_string());
                } else {
                    let names = params.iter().map(|p| camel(p.split(':').next().unwrap().trim())).collect();
                    side.places.insert(js_name.clone(), file.to_string());
                    side.functions.insert(js_name, names);
                }
            } else {
                panic!("{file}: unexpected item in an extern block: {item}");
            }
            attributes.clear();
        }
    }
}

/// What one snippet defines.
#[derive(Default, Debug)]
struct JsSide {
    functions: BTreeMap<String, Vec<String>>,
    typedefs: BTreeMap<String, BTreeSet<String>>,
    tables: BTreeMap<String, BTreeMap<String, u32>>,
}

fn js_definitions(text: &str) -> JsSide {
    let mut side = JsSide::default();
    for prefix in ["export function ", "export async function "] {
        let mut from = 0;
        while let Some(found) = text[from..].find(prefix) {
            let start = from + found + prefix.len();
            let open = start + text[start..].find('(').unwrap();
            let name = text[start..open].trim().to_string();
            let (params, after) = bracketed(text, open);
            from = after;
            side.functions.insert(name, split_params(params));
        }
    }
    let mut from = 0;
    while let Some(found) = text[from..].find("@typedef {object} ") {
        let start = from + found + "@typedef {object} ".len();
        let name_end = start + text[start..].find(|c: char| c.is_whitespace()).unwrap();
        let name = text[start..name_end].to_string();
        let end = name_end + text[name_end..].find("*/").unwrap();
        let mut properties = BTreeSet::new();
        for line in text[name_end..end].lines() {
            if let Some(at) = line.find("@property ") {
                let line = &line[at + "@property ".len()..];
                // Past the type in braces (which may nest), the name, optional in brackets.
                let open = line.find('{').unwrap();
                let (_, after) = bracketed(line, open);
                let token = line[after..].split_whitespace().next().unwrap();
                properties.insert(token.trim_start_matches('[').trim_end_matches(']').to_string());
            }
        }
        side.typedefs.insert(name, properties);
        from = end;
    }
    let mut from = 0;
    while let Some(found) = text[from..].find("export const ") {
        let start = from + found + "export const ".len();
        let name_end = start + text[start..].find(' ').unwrap();
        let name = text[start..name_end].to_string();
        from = name_end;
        let Some(freeze) = text[name_end..].find("= Object.freeze(").filter(|at| *at < 4) else {
            continue;
        };
        let open = name_end + freeze + "= Object.freeze(".len();
        let (body, after) = bracketed(text, open);
        from = after;
        let mut table = BTreeMap::new();
        for line in body.lines() {
            let line = line.trim();
            if line.is_empty() || line.starts_with("//") {
                continue;
            }
            let (key, value) = line.trim_end_matches(',').split_once(':').expect("key: code");
            table.insert(key.trim().to_string(), value.trim().parse().expect("a code is a number"));
        }
        side.tables.insert(name, table);
    }
    side
}

/// Enums whose doc says "On the wire: `NAME` in X.js": (X.js, NAME) → variant → code.
fn rust_tables() -> BTreeMap<(String, String), BTreeMap<String, u32>> {
    let mut tables = BTreeMap::new();
    for entry in fs::read_dir(web_dir()).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("rs") {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        let marker = "On the wire: `";
        let mut from = 0;
        while let Some(found) = text[from..].find(marker) {
            let start = from + found + marker.len();
            let name = text[start..start + text[start..].find('`').unwrap()].to_string();
            let file_start = start + name.len() + "` in ".len();
            let file = text[file_start..file_start + text[file_start..].find(".js").unwrap() + 3].to_string();
            let open = start + text[start..].find("enum ").unwrap();
            let open = open + text[open..].find('{').unwrap();
            let (body, after) = bracketed(&text, open);
            from = after;
            let mut variants = BTreeMap::new();
            for line in body.lines() {
                let line = line.trim();
                if line.is_empty() || line.starts_with("//") {
                    continue;
                }
                let (variant, code) = line.trim_end_matches(',').split_once('=').expect("Variant = code");
                variants.insert(variant.trim().to_string(), code.trim().parse().expect("a code is a number"));
            }
            tables.insert((file, name), variants);
        }
    }
    tables
}

/// The names the browser entry's lazy loading imports from the snippets
/// (scripts/bundle-glue.mjs's `import { … } from ${…Spec}` lines): JS calling JS, never the module.
fn bundle_imports() -> BTreeSet<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bundle-glue.mjs");
    let text = fs::read_to_string(script).unwrap();
    let mut names = BTreeSet::new();
    for line in text.lines().filter(|line| line.contains("`import {") && line.contains("Spec};`")) {
        let inner = &line[line.find('{').unwrap() + 1..line.find('}').unwrap()];
        names.extend(inner.split(',').map(|name| name.trim().to_string()).filter(|name| !name.is_empty()));
    }
    names
}

/// Every disagreement between the two sides, worded for the one who made it.
fn disagreements() -> Vec<String> {
    let mut problems = Vec::new();
    let sides = rust_declarations();
    let lazy_only = bundle_imports();
    assert!(sides.len() >= 4, "found the extern blocks of only {:?}", sides.keys());
    for (module, rust) in &sides {
        let text = fs::read_to_string(web_dir().join(module)).unwrap();
        let js = js_definitions(&text);
        for (name, params) in &rust.functions {
            let at = &rust.places[name];
            match js.functions.get(name) {
                None => problems.push(format!("{at} declares `{name}`, which {module} does not export")),
                Some(js_params) if js_params != params => problems.push(format!(
                    "`{name}`: {at} passes ({}), {module} takes ({})",
                    params.join(", "),
                    js_params.join(", ")
                )),
                Some(_) => {}
            }
        }
        for name in js.functions.keys() {
            if !rust.functions.contains_key(name) && !lazy_only.contains(name) {
                problems
                    .push(format!("{module} exports `{name}`, which no extern block in src/web declares"));
            }
        }
        for (ty, getters) in &rust.types {
            if getters.is_empty() {
                // An opaque handle (no property read), e.g. a type passed back as is.
                continue;
            }
            match js.typedefs.get(ty) {
                None => problems
                    .push(format!("src/web reads properties of `{ty}`; {module} has no typedef of it")),
                Some(properties) if properties != getters => problems.push(format!(
                    "`{ty}`: src/web reads {{{}}}, {module}'s typedef has {{{}}}",
                    getters.iter().cloned().collect::<Vec<_>>().join(", "),
                    properties.iter().cloned().collect::<Vec<_>>().join(", ")
                )),
                Some(_) => {}
            }
        }
        for ty in js.typedefs.keys() {
            if !rust.types.contains_key(ty) {
                problems.push(format!("{module} has a typedef `{ty}` that no extern type in src/web reads"));
            }
        }
    }
    let rust_tables = rust_tables();
    let mut js_tables = BTreeMap::new();
    for module in sides.keys() {
        let text = fs::read_to_string(web_dir().join(module)).unwrap();
        for (name, table) in js_definitions(&text).tables {
            js_tables.insert((module.clone(), name), table);
        }
    }
    for (key, variants) in &rust_tables {
        let (module, name) = key;
        match js_tables.get(key) {
            None => {
                problems.push(format!("an enum says it is `{name}` in {module}, which has no such table"))
            }
            Some(table) => {
                let js: BTreeMap<String, u32> = table.iter().map(|(k, v)| (pascal(k), *v)).collect();
                if &js != variants {
                    problems.push(format!("`{name}`: Rust has {variants:?}, {module} has {js:?}"));
                }
            }
        }
    }
    for (module, name) in js_tables.keys() {
        if !rust_tables.contains_key(&(module.clone(), name.clone())) {
            problems.push(format!(
                "{module}'s table `{name}` has no enum saying \"On the wire: `{name}` in {module}\""
            ));
        }
    }
    problems
}

#[test]
fn every_crossing_value_has_the_same_name_on_both_sides() {
    let problems = disagreements();
    assert!(problems.is_empty(), "the boundary disagrees with itself:\n  {}", problems.join("\n  "));
}

#[test]
fn the_check_sees_the_whole_boundary() {
    // A parser that found nothing would pass everything: make sure it sees what is there.
    let sides = rust_declarations();
    let functions: usize = sides.values().map(|s| s.functions.len()).sum();
    let properties: usize = sides.values().flat_map(|s| s.types.values()).map(BTreeSet::len).sum();
    assert!(functions >= 20, "found only {functions} snippet functions");
    assert!(properties >= 20, "found only {properties} properties read");
    assert_eq!(rust_tables().len(), 2, "the two code tables (VALUE_KINDS, URL_REFUSALS)");
    // Only what the lazy loading calls is let off: a name read wrongly would let any export off.
    assert_eq!(
        bundle_imports(),
        BTreeSet::from(
            ["TileError", "sendEarly", "buildRequest", "resolveUrls", "lazyApi"].map(String::from)
        )
    );
    assert_eq!(
        sides["wire.js"].functions["makeTile"],
        ["head", "data", "first", "attempts", "elapsedMs", "empty"]
    );
}

#[test]
fn the_parsers_read_what_they_claim() {
    let js = js_definitions(
        "export function f(a, b,\n  c,\n) {}\n/**\n * @typedef {object} T\n * @property {Array<{x: 1}>} [one] x\n * @property {number} two\n */\nexport const K = Object.freeze({\n  // why\n  aB: 1,\n  c: 2,\n});\n",
    );
    assert_eq!(js.functions["f"], ["a", "b", "c"]);
    assert_eq!(js.typedefs["T"], BTreeSet::from(["one".to_string(), "two".to_string()]));
    assert_eq!(js.tables["K"], BTreeMap::from([("aB".to_string(), 1), ("c".to_string(), 2)]));
    let mut side = RustSide::default();
    read_block(
        "\n    /// doc\n    #[wasm_bindgen(js_name = makeX)]\n    pub fn make_x(retry_after_ms: Option<f64>, b: &[f64]) -> JsValue;\n    type T;\n    #[wasm_bindgen(method, getter, js_name = contentType)]\n    fn content_type(this: &T) -> Option<String>;\n",
        "x.rs",
        &mut side,
    );
    assert_eq!(side.functions["makeX"], ["retryAfterMs", "b"]);
    assert_eq!(side.types["T"], BTreeSet::from(["contentType".to_string()]));
}

/// A crossing with many parameters is a positional protocol in all but name: past six, the values
/// cross as a named object (an extern type with setters or getters, checked above like the rest).
#[test]
fn no_crossing_has_more_than_six_parameters() {
    let mut wide = Vec::new();
    for (file, side) in rust_declarations() {
        for (name, params) in &side.functions {
            if params.len() > 6 {
                wide.push(format!("{file}: {name} takes {} parameters", params.len()));
            }
        }
    }
    assert!(wide.is_empty(), "{}", wide.join("\n"));
}

/// The rate-limit fields the JS half reads are the ones the parser looks for, by name: a field
/// missing from either list would be stated by servers and never paced by.
#[test]
fn the_rate_limit_fields_read_are_the_ones_parsed() {
    let js = std::fs::read_to_string(web_dir().join("transport.js")).unwrap();
    let start = js.find("const RATE_LIMIT_FIELDS = [").expect("RATE_LIMIT_FIELDS in transport.js");
    let (list, _) = bracketed(&js, start + js[start..].find('[').unwrap());
    let read: Vec<String> =
        split_params(list).iter().map(|name| name.trim_matches('"').to_string()).collect();
    assert_eq!(read, tilefetch::response::rate_limit::FIELDS);
}

/// The other fields the JS half reads are the ones the core takes from its lines: a field missing
/// from either list would never reach classification.
#[test]
fn the_fields_read_are_the_ones_parsed() {
    let js = std::fs::read_to_string(web_dir().join("transport.js")).unwrap();
    let start = js.find("const READ_FIELDS = [").expect("READ_FIELDS in transport.js");
    let (list, _) = bracketed(&js, start + js[start..].find('[').unwrap());
    let read: Vec<String> =
        split_params(list).iter().map(|name| name.trim_matches('"').to_string()).collect();
    assert_eq!(read, tilefetch::response::fields::FIELDS);
}
