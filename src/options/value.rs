//! A JS value as the option and config parsers see it: the wasm layer reads an object into
//! `(key, Value)` pairs, so every rule about options is plain Rust, tested natively.

/// A JS value as the options parser sees it.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `undefined` or `null`.
    Absent,
    /// A boolean.
    Bool(bool),
    /// A number, not yet checked to be finite.
    Number(f64),
    /// A string.
    Text(String),
    /// An array's items, in order (an item that is an array or an object reads as
    /// [`Value::Object`]).
    List(Vec<Value>),
    /// A function (the wasm layer keeps it).
    Function,
    /// An `AbortSignal`.
    AbortSignal,
    /// A plain object's own entries (nested config such as `breaker` and `hosts`).
    Record(Vec<(String, Value)>),
    /// Any other object (`Headers`, class instances, …).
    Object,
}

impl Value {
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            Value::Absent => "undefined",
            Value::Bool(_) => "a boolean",
            Value::Number(_) => "a number",
            Value::Text(_) => "a string",
            Value::List(_) => "an array",
            Value::Function => "a function",
            Value::AbortSignal => "an AbortSignal",
            Value::Record(_) | Value::Object => "an object",
        }
    }
}

/// One field of an options object: its key and its value, borrowed from where they were read.
pub type Entry<'a> = (&'a str, &'a Value);

/// Borrows owned `(key, value)` pairs as entries.
pub fn entries_of<K: AsRef<str>>(owned: &[(K, Value)]) -> Vec<Entry<'_>> {
    owned.iter().map(|(k, v)| (k.as_ref(), v)).collect()
}
