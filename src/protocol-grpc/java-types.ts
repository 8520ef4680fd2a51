import type { TypeDesc } from "../service/type-desc.js";

/** The Java type name a Dubbo peer expects in `argTypes` for one of our parameter types. */
export function javaTypeName(t: TypeDesc): string {
  switch (t.kind) {
    case "string":
      return "java.lang.String";
    case "number":
      return "java.lang.Double";
    case "boolean":
      return "java.lang.Boolean";
    case "bigint":
      return "java.lang.Long";
    case "date":
      return "java.util.Date";
    case "bytes":
    case "file":
      return "[B";
    case "array":
      return "java.util.List";
    case "map":
      return "java.util.Map";
    case "class":
      return t.ctor.name;
    default:
      return "java.lang.Object";
  }
}
