// Owns `requestStreams`, `responseStreams`. True when the method's request side is a stream. Must
// not change: what a decorated class describes (paths, parameter order, tags): the wire depends on
// it.
import type * as protobuf from "protobufjs";
import type { Constraints } from "./constraints.js";
import type { TypeDesc } from "./type-desc.js";

/** The four RPC kinds. */
export type MethodKind = "unary" | "server_streaming" | "client_streaming" | "bidi_streaming";

/** `true`: any verified caller; `{ roles }`: a verified caller holding one of these roles. */
export type AuthRequirement = true | { readonly roles: readonly string[] };

/** One bound parameter of a method. */
export interface ParamDescriptor {
  /** Position in the JavaScript parameter list. */
  readonly index: number;
  /** Name for binding by name (`@Param("name")`), if any. */
  readonly name: string | undefined;
  /** Type; for a streaming request parameter, the type of each message. */
  readonly type: TypeDesc;
  /** The argument may be left out (binds `undefined`). */
  readonly optional: boolean;
  /** Field number in the derived protobuf request message. */
  readonly tag: number;
  /** Validation constraints (`@Param({ min, pattern, … })`), checked against the type at registration; undefined: none. */
  readonly constraints: Constraints | undefined;
  /** Where a REST mapping reads it (`@Path`, `@Query`, `@Header`); undefined: the body. */
  readonly in?: "path" | "query" | "header";
}

/** A method's REST mapping, parsed at registration. */
export interface HttpRoute {
  /** `GET`, `POST`, `PUT`, `PATCH` or `DELETE` (a GET route also answers HEAD). */
  readonly method: string;
  /** The template as declared: `/users/{id}`. */
  readonly path: string;
  /** The template's segments after the leading `/`: literal text, or `{ param }` for a variable. */
  readonly segments: readonly (string | { readonly param: string })[];
}

/** Everything the router, the binder and the client need to know about one method. */
export interface MethodDescriptor {
  /** Interface name (`greet.GreetService`). */
  readonly serviceName: string;
  /** Wire name (`Greet`). */
  readonly name: string;
  /** `/<service>/<name>` */
  readonly path: string;
  /** The JavaScript method name. */
  readonly propertyKey: string;
  readonly kind: MethodKind;
  /** Bound parameters in order (the context parameter is not among them). */
  readonly params: readonly ParamDescriptor[];
  /** Total JavaScript parameter count, including the context parameter. */
  readonly arity: number;
  /** Retries a client may make (`@Method({ retries })`); undefined: the client's default. */
  readonly retries: number | undefined;
  /**
   * No side effects (`@Method({ idempotent: true })`, or `idempotency_level = NO_SIDE_EFFECTS` in
   * the .proto): GET is allowed for a unary one, and clients retry it more freely.
   */
  readonly idempotent: boolean;
  /** The result type (`@Method({ returns })`; per message for streams); undefined: not declared. */
  readonly returns: TypeDesc | undefined;
  /** Index of the `@Ctx()` parameter, or -1. */
  readonly contextIndex: number;
  /** Request message type, for methods bound to a .proto. */
  readonly requestType: protobuf.Type | undefined;
  /** Response message type, for methods bound to a .proto. */
  readonly responseType: protobuf.Type | undefined;
  /** Authentication this method requires; `false` waives a server-wide default; undefined: not set. */
  readonly auth: AuthRequirement | false | undefined;
  /** The REST mapping (`@Get("/users/{id}")` …), if any; the RPC path answers either way. */
  readonly http?: HttpRoute;
  /** `@Method({ description })`, for the OpenAPI document. */
  readonly description?: string;
  /** Offered as an MCP tool (`@Method({ mcp })` or `@Service(…, { mcp: true })`); undefined: not a tool. */
  readonly mcp?: McpToolDescriptor;
}

/** How a method appears as an MCP tool, as declared (checked at registration). */
export interface McpToolDescriptor {
  readonly name?: string;
  readonly title?: string;
  readonly description?: string;
  readonly destructive?: boolean;
}

/** A service class described once, at registration. */
export interface ServiceDescriptor {
  readonly name: string;
  readonly version: string;
  readonly group: string;
  readonly methods: readonly MethodDescriptor[];
  /** The .proto service it is bound to, if any. */
  readonly proto: protobuf.Service | undefined;
  /** `@Service(name, { description })`, for the OpenAPI document. */
  readonly description?: string;
}

/** True when the method's request side is a stream. */
export function requestStreams(kind: MethodKind): boolean {
  return kind === "client_streaming" || kind === "bidi_streaming";
}

/** True when the method's response side is a stream. */
export function responseStreams(kind: MethodKind): boolean {
  return kind === "server_streaming" || kind === "bidi_streaming";
}
