// Reading caller-supplied values (options objects, configs) for the wasm module in one call
// each, without letting an exception cross into wasm.

// A throwing getter or Proxy trap must not unwind through Rust frames that cannot clean up.
const PLAIN = Object.getPrototypeOf({});

// 0 absent, 1 boolean, 2 number, 3 string, 4 function, 5 array, 6 AbortSignal, 7 plain object,
// 8 anything else (including values that throw when looked at).
export function kindOf(value) {
  try {
    if (value === undefined || value === null) return 0;
    switch (typeof value) {
      case "boolean":
        return 1;
      case "number":
        return 2;
      case "string":
        return 3;
      case "function":
        return 4;
      case "object":
        break;
      default:
        return 8;
    }
    if (Array.isArray(value)) return 5;
    if (typeof AbortSignal !== "undefined" && value instanceof AbortSignal) {
      return typeof value.aborted === "boolean" ? 6 : 8;
    }
    const proto = Object.getPrototypeOf(value);
    return proto === null || proto === PLAIN ? 7 : 8;
  } catch {
    return 8;
  }
}

// Own enumerable fields as one flat array [key, kind, value, …] (kind as kindOf gives it; a field
// whose getter throws has kind 9 and no value), or null when the keys cannot be read.
export function readFields(value) {
  let keys;
  try {
    keys = Object.keys(value);
  } catch {
    return null;
  }
  const out = [];
  for (const key of keys) {
    try {
      const field = value[key];
      out.push(key, kindOf(field), field);
    } catch {
      out.push(key, 9, undefined);
    }
  }
  return out;
}
