// Owns `Get`, `Post`, `Put`, `Patch`, … Exposes a method as `GET <path>` besides its RPC path (it
// stays callable over Triple, gRPC, Connect and gRPC-Web by name). Must not change: what a
// decorated class describes (paths, parameter order, tags): the wire depends on it.
import { type HttpMapping, isParamOptions, methodDecorator, type ParamOptions, paramDecorator, type UniversalMethodDecorator } from "./decorators.js";
import type { TypeSpec } from "./type-desc.js";

function mapping(method: HttpMapping["method"], path: string): UniversalMethodDecorator {
  return methodDecorator({ http: { method, path } });
}

/**
 * Exposes a method as `GET <path>` besides its RPC path (it stays callable over Triple, gRPC,
 * Connect and gRPC-Web by name). Path variables are whole segments: `@Get("/users/{id}")`. A GET
 * route also answers HEAD. Combine with `@Method({ returns, ... })` for the other options.
 */
export function Get(path: string): UniversalMethodDecorator {
  return mapping("GET", path);
}
/** Exposes a method as `POST <path>` besides its RPC path; see {@link Get}. */
export function Post(path: string): UniversalMethodDecorator {
  return mapping("POST", path);
}
/** Exposes a method as `PUT <path>` besides its RPC path; see {@link Get}. */
export function Put(path: string): UniversalMethodDecorator {
  return mapping("PUT", path);
}
/** Exposes a method as `PATCH <path>` besides its RPC path; see {@link Get}. */
export function Patch(path: string): UniversalMethodDecorator {
  return mapping("PATCH", path);
}
/** Exposes a method as `DELETE <path>` besides its RPC path; see {@link Get}. */
export function Delete(path: string): UniversalMethodDecorator {
  return mapping("DELETE", path);
}

type SourceSpec = string | (ParamOptions & { name: string });

function sourced(source: "path" | "query" | "header", spec: SourceSpec): ParameterDecorator {
  const options: ParamOptions = typeof spec === "string" ? { name: spec } : { ...spec };
  return paramDecorator("body", { ...options, in: source });
}

/**
 * Binds a parameter to the `{name}` segment of the method's REST path, percent-decoded and
 * converted to the parameter's type (string, number, boolean, bigint, Date): `@Path("id")` or
 * `@Path({ name: "id", type: Number })`. A value that does not convert is a 400 naming it.
 */
export function Path(spec: SourceSpec): ParameterDecorator {
  return sourced("path", spec);
}
/**
 * Binds a parameter to a query parameter of a REST request: `@Query("limit")`. Array parameters
 * (`@Query({ name: "tag", type: [String] })`) take every value of a repeated key (`?tag=a&tag=b`).
 * Missing is a 400 unless `optional: true`.
 */
export function Query(spec: SourceSpec): ParameterDecorator {
  return sourced("query", spec);
}
/**
 * Binds a parameter to a request header of a REST request (case-insensitive): `@Header("x-tenant")`.
 * Missing is a 400 unless `optional: true`.
 */
export function Header(spec: SourceSpec): ParameterDecorator {
  return sourced("header", spec);
}
/**
 * Binds a parameter from the body of a REST request, with the same body rules as the RPC path
 * (JSON, form, multipart, XML, text): what a parameter without a source gets on POST, PUT, PATCH
 * and DELETE routes. Takes `@Param`'s forms (`@Body()`, `@Body("user")`, `@Body(User)`).
 */
export function Body(spec?: string | TypeSpec | ParamOptions): ParameterDecorator {
  if (spec === undefined) return paramDecorator("body", { in: "body" });
  if (typeof spec === "string") return paramDecorator("body", { name: spec, in: "body" });
  if (isParamOptions(spec)) return paramDecorator("body", { ...spec, in: "body" });
  return paramDecorator("body", { type: spec as TypeSpec, in: "body" });
}
