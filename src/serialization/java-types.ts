// Owns `javaTypeName`, `javaClassName`, `checkJavaTypes`, `checkServiceJavaNames`. TypeScript types
// ↔ Java class names, for Dubbo's wrapper (`argTypes`, the response `type`) and for the class names
// inside hessian2 and fastjson2 JSONB (docs/schema.md has the table). Must not change: the
// Java-compatible encodings (the Java interop tests compare them byte for byte).
import type { ServiceDescriptor } from "../service/descriptors.js";
import { javaClassOf } from "../service/java-class.js";
import type { TypeDesc } from "../service/type-desc.js";

/**
 * TypeScript types ↔ Java class names, for Dubbo's wrapper (`argTypes`, the response `type`)
 * and for the class names inside hessian2 and fastjson2 JSONB (docs/schema.md has the table).
 * `number` is `double` unless declared `T.int32` (`int`), `T.int64` (`long`) or `T.float`;
 * optional parameters take the boxed class (`java.lang.Integer`), since they may be null.
 */
export function javaTypeName(t: TypeDesc, optional = false, strict = false): string {
  switch (t.kind) {
    case "string":
      if (t.java?.type === "char") return optional ? "java.lang.Character" : "char";
      return t.java?.name ?? "java.lang.String";
    case "number":
      if (t.java) return optional ? (t.java === "short" ? "java.lang.Short" : "java.lang.Byte") : t.java;
      return numberName(t.proto, optional);
    case "boolean":
      return optional ? "java.lang.Boolean" : "boolean";
    case "bigint":
      return t.java ?? (optional ? "java.lang.Long" : "long");
    case "date":
      return "java.util.Date";
    case "bytes":
    case "file":
    case "upload":
    case "download":
      return "[B";
    case "array":
      return t.java ?? "java.util.List";
    case "map":
      return t.java ?? "java.util.Map";
    case "class":
      return javaClassName(t, strict);
    default:
      return "java.lang.Object";
  }
}

const BOXED: Record<string, string> = { int: "java.lang.Integer", long: "java.lang.Long", float: "java.lang.Float", double: "java.lang.Double" };

function numberName(proto: string | undefined, optional: boolean): string {
  const prim = proto === "int32" || proto === "uint32" ? "int" : proto === "int64" || proto === "uint64" ? "long" : proto === "float" ? "float" : "double";
  return optional ? BOXED[prim] : prim;
}

/**
 * The Java class of a decorated class: its `@JavaClass` name. Strict (hessian2, fastjson2, where
 * the name goes into the data and Java instantiates it) a class without one is an error naming
 * it; otherwise its JavaScript name stands in (JSON wrappers, where Java only reads `argTypes`).
 */
export function javaClassName(t: Extract<TypeDesc, { kind: "class" }>, strict: boolean): string {
  const name = javaClassOf(t.ctor);
  if (name) return name;
  if (strict) {
    throw new TypeError(
      `class ${t.ctor.name} has no Java class name: declare it with @JavaClass("org.example.${t.ctor.name}") to send it in hessian2 or fastjson2`,
    );
  }
  return t.ctor.name;
}

/**
 * Checks that every class reachable from `types` has a `@JavaClass` name; throws naming the
 * first that does not (called when a method's hessian2 or fastjson2 codec is built).
 */
export function checkJavaTypes(types: readonly TypeDesc[], seen = new Set<TypeDesc>()): void {
  for (const t of types) {
    if (seen.has(t)) continue;
    seen.add(t);
    if (t.kind === "class") {
      javaClassName(t, true);
      checkJavaTypes(
        t.fields.map((f) => f.type),
        seen,
      );
    } else if (t.kind === "array") checkJavaTypes([t.element], seen);
    else if (t.kind === "map") checkJavaTypes([t.value], seen);
  }
}

type ClassDesc = Extract<TypeDesc, { kind: "class" }>;

/** The decorated classes reachable from `types` (fields, array elements, map values), each once. */
function classesIn(types: readonly TypeDesc[], out: Set<ClassDesc>, seen = new Set<TypeDesc>()): Set<ClassDesc> {
  for (const t of types) {
    if (seen.has(t)) continue;
    seen.add(t);
    if (t.kind === "class") {
      out.add(t);
      classesIn(
        t.fields.map((f) => f.type),
        out,
        seen,
      );
    } else if (t.kind === "array") classesIn([t.element], out, seen);
    else if (t.kind === "map") classesIn([t.value], out, seen);
  }
  return out;
}

/**
 * Registration: a service whose classes carry `@JavaClass` names is meant for Dubbo Java callers
 * (hessian2, fastjson2), so every class its methods take or return must have one; throws naming
 * the first that does not. A service with no Java names at all is not checked (its JSON and
 * protobuf callers need none; a Java call of it is refused naming the class).
 */
export function checkServiceJavaNames(service: ServiceDescriptor): void {
  const classes = new Set<ClassDesc>();
  for (const md of service.methods) classesIn([...md.params.map((p) => p.type), ...(md.returns ? [md.returns] : [])], classes);
  const named = [...classes].find((c) => javaClassOf(c.ctor) !== undefined);
  if (!named) return;
  for (const md of service.methods) {
    for (const c of classesIn([...md.params.map((p) => p.type), ...(md.returns ? [md.returns] : [])], new Set())) {
      if (javaClassOf(c.ctor) !== undefined) continue;
      throw new TypeError(
        `${service.name}.${md.name}: class ${c.ctor.name} has no Java class name: declare it with @JavaClass("org.example.${c.ctor.name}") ` +
          `(the service's other classes, like ${named.ctor.name} (${javaClassOf(named.ctor)}), have Java names, so Dubbo Java callers will send and expect it)`,
      );
    }
  }
}
