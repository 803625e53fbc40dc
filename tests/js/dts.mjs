// The package's types as the TypeScript compiler reads them from pkg/index.d.ts, as an editor
// does: the fields of an exported interface, type alias or class, for tests that hold the built
// package's values and the docs to what the types promise.
import path from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const entry = path.join(ROOT, "pkg/index.d.ts");

export const program = ts.createProgram([entry], {
  strict: true,
  noEmit: true,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
});
const checker = program.getTypeChecker();
const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(program.getSourceFile(entry)));

/** The compiler's complaints about pkg/index.d.ts and what it imports. */
export const diagnostics = () => ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, "\n"));

/**
 * The fields of the exported type `name`, dotted where they sit in an object literal type
 * (`breaker.openMs`): name → {type, optional, default (the `@default` tag), doc}. Inherited
 * fields (a class's `Error` ones) are left out unless `inherited`.
 */
export function fieldsOf(name, { inherited = true } = {}) {
  const symbol = exported.find((s) => s.name === name);
  if (!symbol) throw new Error(`pkg/index.d.ts exports no ${name}`);
  const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
  const fields = new Map();
  const walk = (type, prefix) => {
    for (const property of checker.getPropertiesOfType(type)) {
      // A field of a mapped type (`Omit<…>`) has its declaration through its origin.
      const declaration = property.valueDeclaration ?? property.declarations?.[0];
      if (!inherited && declaration?.parent?.name?.text !== target.name && prefix === "") continue;
      if (declaration?.type && ts.isTypeLiteralNode(declaration.type)) {
        walk(checker.getTypeFromTypeNode(declaration.type), `${prefix}${property.name}.`);
        continue;
      }
      const tag = property.getJsDocTags(checker).find((t) => t.name === "default");
      const declaredType = checker.getTypeOfSymbol(property);
      fields.set(`${prefix}${property.name}`, {
        type: declaration?.type?.getText(),
        accepts: (value) => accepts(declaredType, value),
        optional: (property.flags & ts.SymbolFlags.Optional) !== 0,
        default: tag ? ts.displayPartsToString(tag.text) : undefined,
        doc: ts.displayPartsToString(property.getDocumentationComment(checker)).replace(/\s+/g, " "),
      });
    }
  };
  walk(checker.getDeclaredTypeOfSymbol(target), "");
  return fields;
}

/** Whether the JS `value` is of the compiler's `type` (primitives, literals, unions, objects). */
function accepts(type, value) {
  const F = ts.TypeFlags;
  return (type.isUnion() ? type.types : [type]).some((t) => {
    if (t.flags & (F.Any | F.Unknown)) return true;
    if (t.flags & F.Null) return value === null;
    if (t.flags & F.Undefined) return value === undefined;
    if (t.flags & F.StringLiteral || t.flags & F.NumberLiteral) return value === t.value;
    if (t.flags & F.BooleanLiteral) return value === (t.intrinsicName === "true");
    if (t.flags & F.String) return typeof value === "string";
    if (t.flags & F.Number) return typeof value === "number";
    if (t.flags & F.Boolean) return typeof value === "boolean";
    if (t.flags & F.Object) return value !== null && typeof value === "object";
    return false;
  });
}
