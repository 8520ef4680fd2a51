// Owns `restMapping`, `checkNoRestSources`. Settles a REST mapping: the route (its template parsed)
// and every parameter's source. Must not change: what a decorated class describes (paths, parameter
// order, tags): the wire depends on it.
import type { HttpMapping } from "./decorators.js";
import type { HttpRoute, MethodKind, ParamDescriptor } from "./descriptors.js";

const HTTP_METHODS: ReadonlySet<string> = new Set(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const VARIABLE = /^\{([A-Za-z_][A-Za-z0-9_.-]*)\}$/;

/** A parameter as `describeService` reads it, before its REST source is settled. */
export type DeclaredParam = ParamDescriptor & { readonly declaredIn: "path" | "query" | "header" | "body" | undefined };

/**
 * Parses a path template: `/users/{id}/posts` → `["users", { param: "id" }, "posts"]`. A
 * variable is a whole segment; literal segments are matched as sent (percent-encoded form).
 */
function parseTemplate(path: string, where: string): HttpRoute["segments"] {
  if (typeof path !== "string" || !path.startsWith("/") || /[?#\s]/.test(path)) {
    throw new TypeError(`${where}: the REST path must start with "/" and hold no query, fragment or space, got ${JSON.stringify(path)}`);
  }
  if (path === "/") return [];
  const seen = new Set<string>();
  return path
    .slice(1)
    .split("/")
    .map((seg) => {
      if (seg === "") throw new TypeError(`${where}: the REST path ${path} has an empty segment ("//" or a trailing "/")`);
      const m = VARIABLE.exec(seg);
      if (m) {
        if (seen.has(m[1])) throw new TypeError(`${where}: the REST path ${path} names {${m[1]}} twice`);
        seen.add(m[1]);
        return { param: m[1] };
      }
      if (seg.includes("{") || seg.includes("}")) {
        throw new TypeError(`${where}: in ${path}, a path variable must be a whole segment like /{id}, got "${seg}"`);
      }
      return seg;
    });
}

/** Where one parameter of a REST-mapped method comes from, with what is wrong about it refused. */
function sourceOf(p: DeclaredParam, vars: ReadonlySet<string>, method: string, where: string): ParamDescriptor["in"] {
  const pwhere = `${where} parameter #${p.index + 1}`;
  const declared = p.declaredIn;
  if (declared === "body") {
    if (method === "GET") throw new TypeError(`${pwhere} is @Body() on a GET route: GET has no body; use @Query("name") or another HTTP method`);
    return undefined;
  }
  if (declared !== undefined) {
    if (!p.name)
      throw new TypeError(
        `${pwhere}: @${declared[0].toUpperCase()}${declared.slice(1)} needs a name, e.g. @${declared[0].toUpperCase()}${declared.slice(1)}("id")`,
      );
    if (declared === "path" && !vars.has(p.name)) throw new TypeError(`${pwhere} is @Path("${p.name}") but the REST path has no {${p.name}} segment`);
    return declared;
  }
  if (p.name && vars.has(p.name)) return "path";
  if (method !== "GET") return undefined;
  if (!p.name) throw new TypeError(`${pwhere} of a GET route needs a source: GET has no body, so name it @Query("name"), @Path("name") or @Header("name")`);
  return "query";
}

/**
 * Settles a REST mapping: the route (its template parsed) and every parameter's source. Named
 * parameters matching a `{variable}` come from the path, other named ones of a GET route from
 * the query, the rest from the body. Every mistake is a registration error naming the method.
 */
export function restMapping(
  mapping: HttpMapping,
  params: readonly DeclaredParam[],
  kind: MethodKind,
  where: string,
): { route: HttpRoute; params: ParamDescriptor[] } {
  const method = String(mapping?.method ?? "").toUpperCase();
  if (!HTTP_METHODS.has(method)) {
    throw new TypeError(`${where}: REST method must be GET, POST, PUT, PATCH or DELETE, got ${JSON.stringify(mapping?.method)}`);
  }
  if (kind !== "unary" && kind !== "server_streaming") {
    throw new TypeError(`${where} is ${kind.replace("_", "-")}: only unary and server-streaming methods can have a REST mapping`);
  }
  const segments = parseTemplate(mapping.path, where);
  const vars = new Set(segments.flatMap((s) => (typeof s === "string" ? [] : [s.param])));
  const out = params.map((p): ParamDescriptor => {
    const source = sourceOf(p, vars, method, where);
    const { declaredIn: _, ...rest } = p;
    const name = source === "header" ? p.name?.toLowerCase() : p.name;
    return source === undefined ? { ...rest, in: undefined } : { ...rest, name, in: source };
  });
  for (const v of vars) {
    if (!out.some((p) => p.in === "path" && p.name === v)) {
      throw new TypeError(`${where}: the REST path ${mapping.path} has {${v}} but no parameter takes it; declare @Path("${v}")`);
    }
  }
  return { route: { method, path: mapping.path, segments }, params: out };
}

/** Parameters of a method without a REST mapping must not ask for one. */
export function checkNoRestSources(params: readonly DeclaredParam[], where: string): ParamDescriptor[] {
  return params.map((p) => {
    if (p.declaredIn !== undefined && p.declaredIn !== "body") {
      throw new TypeError(
        `${where} parameter #${p.index + 1} is @${p.declaredIn[0].toUpperCase()}${p.declaredIn.slice(1)} but the method has no REST mapping; add @Get/@Post/... ("/path") to the method`,
      );
    }
    const { declaredIn: _, ...rest } = p;
    return rest;
  });
}
