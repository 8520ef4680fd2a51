// Owns `SERVICE_KEY`, `PARAMS_KEY`, `Service`, `definedServices`, … Marks a class as an RPC
// service. `name` is the interface name of the path (`/greet.GreetService/Greet`); it defaults to
// the class name. Must not change: what a decorated class describes (paths, parameter order, tags):
// the wire depends on it.
import type * as protobuf from "protobufjs";
import type { AuthRequirement, MethodKind } from "./descriptors.js";
import { CONSTRAINT_KEYS, type Constraints, pickConstraints } from "./constraints.js";
import { defineMeta, getMeta, hasOwnMeta } from "./metadata.js";
import { type FieldOptions, FIELDS_KEY, type RawField, recordField, SYMBOL_METADATA, type TypeSpec } from "./type-desc.js";
import type { TypedFieldDecorator, TypedMethodDecorator } from "./typed-params.js";

/** Options of `@Service`. */
export interface ServiceOptions {
  /** Service version, matched against `tri-service-version`. */
  version?: string;
  /** Service group, matched against `tri-service-group`. */
  group?: string;
  /**
   * A .proto file (path) or a loaded protobufjs Root that defines this service: methods then
   * take and return its messages, `application/proto` works and JSON follows ProtoJSON rules.
   */
  proto?: string | protobuf.Root;
  /** Requires bearer authentication for every method (a method can override). */
  auth?: AuthRequirement;
  /** What the service does, for the OpenAPI document (`toOpenApi`, `/openapi.json`). */
  description?: string;
  /**
   * Offer every unary method of this service as an MCP tool (`createServer({ mcp })`); a method
   * says `@Method({ mcp: false })` to stay out. Streaming methods are skipped. Default false: a
   * method is a tool only when it (or its service) opts in.
   */
  mcp?: boolean;
}

/** Options of `@Method`. */
export interface MethodOptions {
  /** The wire name (`/<service>/<name>`); defaults to the method name. */
  name?: string;
  /** The RPC kind; unary by default, server_streaming for async generator methods. */
  kind?: MethodKind;
  /** Requires (or with `false`, waives) bearer authentication for this method. */
  auth?: AuthRequirement | false;
  /**
   * The type of the result (for streaming methods, of each message), which TypeScript's metadata
   * cannot tell (it says `Promise`). The server encodes and the typed client decodes results by
   * it, so a `Date`, `Uint8Array`, `bigint`, `Map` or decorated class arrives as one. Arrays as
   * `[Item]`.
   */
  returns?: TypeSpec;
  /**
   * How often a client may retry this method on another provider (the failover policy); `0` for
   * calls that must not run twice (charging a card). Default: the client's `retries`.
   */
  retries?: number;
  /**
   * The method has no side effects (protobuf's `idempotency_level = NO_SIDE_EFFECTS`): a unary
   * one may then be called with HTTP GET (Connect GET, and dubbo-js's `?triple=` GET), which
   * browsers and CDNs can cache, and clients may retry it after a failure in mid-call, where a
   * call with side effects is only retried when it never reached a handler.
   */
  idempotent?: boolean;
  /**
   * The method's parameters, in order, where parameter decorators cannot be used: standard
   * (TC39) decorators, TypeScript 5's default, have none. Each entry is a type (`String`,
   * `[Item]`, a decorated class) or `@Param`'s options (`{ name: "sku", type: String }`);
   * `{ context: true }` marks the parameter that receives the {@link CallContext}, like `@Ctx()`.
   * Written in the decorator, the list is checked against the method's signature by the compiler
   * (one entry per parameter, each one's values fitting it).
   */
  params?: readonly (TypeSpec | (ParamOptions & { context?: boolean }))[];
  /**
   * A REST mapping besides the RPC path: `{ method: "GET", path: "/users/{id}" }` (what `@Get`,
   * `@Post`, `@Put`, `@Patch` and `@Delete` set). Path variables are whole segments in braces,
   * bound to the parameter of that name; see `@Path`, `@Query`, `@Header`, `@Body`.
   */
  http?: HttpMapping;
  /** What the method does, for the OpenAPI document. */
  description?: string;
  /**
   * Offer this method as an MCP tool when the server serves MCP (`createServer({ mcp })`):
   * `true`, or the tool's `name` (default `<Service>_<method>`), `title`, `description` (default:
   * the method's) and `destructive` (its effects cannot be undone: `destructiveHint`). `false`
   * keeps it out under a service-level opt-in. Unary methods only. Default: not a tool.
   */
  mcp?: boolean | McpToolOptions;
}

/** `@Method({ mcp: { … } })`: how the method appears as an MCP tool. */
export interface McpToolOptions {
  /** The tool's name: 1 to 64 of `A-Z a-z 0-9 _ - .`. Default `<last segment of the service name>_<wire name>`. */
  name?: string;
  /** A human-readable title. */
  title?: string;
  /** What the tool does, for the model. Default: the method's `description`. */
  description?: string;
  /** The tool's effects cannot be undone (deletes, payments): `annotations.destructiveHint`. Default: not declared. */
  destructive?: boolean;
}

/** Options of `@Param`: name, type, presence, field number and validation constraints. */
export interface ParamOptions extends Constraints {
  /** Binds by this name (JSON objects, form fields, multipart parts). */
  name?: string;
  /** Overrides the type from `design:paramtypes`. */
  type?: TypeSpec;
  /**
   * The argument may be left out: a short JSON array, an absent object key, form field or part
   * binds `undefined` (and JSON `null` does too). Required parameters that are missing are a 400
   * naming them.
   */
  optional?: boolean;
  /** The field number of this parameter in the method's derived protobuf request message (default: its position, from 1). */
  tag?: number;
  /**
   * Where a REST-mapped method reads this parameter: a `{name}` segment of the path, a query
   * parameter, a request header, or the body (the default; on GET routes named parameters default
   * to the query). What `@Path`, `@Query`, `@Header` and `@Body` set. Ignored on RPC paths.
   */
  in?: ParamSource;
}

/** Raw decorator arguments, turned into descriptors by `describeService`. */
export interface RawService {
  name?: string;
  options: ServiceOptions;
}
export interface RawMethod {
  propertyKey: string;
  options: MethodOptions;
}
/** Where a REST-mapped method reads a parameter. */
export type ParamSource = "path" | "query" | "header" | "body";

/** A REST mapping: an HTTP method and a path template (`/users/{id}`). */
export interface HttpMapping {
  readonly method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  readonly path: string;
}

export interface RawParam {
  index: number;
  source: "body" | "context";
  options: ParamOptions;
}

export const SERVICE_KEY = Symbol.for("triple-rpc:service");
const METHODS_KEY = Symbol.for("triple-rpc:methods");
export const PARAMS_KEY = Symbol.for("triple-rpc:params");

/** The context object a standard (TC39) decorator receives as its second argument. */
interface StandardContext {
  readonly kind: string;
  readonly name: string | symbol | undefined;
  readonly static?: boolean;
  readonly private?: boolean;
  readonly metadata?: Record<PropertyKey, unknown>;
}

/** True when a decorator was called the standard way: `(value, context)`. */
function isStandard(x: unknown): x is StandardContext {
  return typeof x === "object" && x !== null && typeof (x as StandardContext).kind === "string";
}

/** The list under `key` of a class's standard metadata, own (copied from the base class's on first write). */
function ownList<T>(ctx: StandardContext, key: symbol, what: string): T[] {
  const meta = ctx.metadata;
  if (!meta) {
    throw new TypeError(`${what}: this runtime gives standard decorators no metadata object; define Symbol.metadata before the class`);
  }
  if (Object.hasOwn(meta, key)) return meta[key] as T[];
  const list = [...((meta[key] as T[] | undefined) ?? [])];
  meta[key] = list;
  return list;
}

/** A member decorator's name, checked: a public, non-static, string-named member. */
function memberName(ctx: StandardContext, what: string): string {
  if (typeof ctx.name !== "string" || ctx.private || ctx.static) {
    throw new TypeError(`${what} belongs on a public, non-static, string-named member, not ${String(ctx.name)}`);
  }
  return ctx.name;
}

/**
 * A decorator usable both ways: legacy (`experimentalDecorators`, with or without
 * `emitDecoratorMetadata`) and standard (TC39, TypeScript 5's default without the flag).
 */
export interface UniversalClassDecorator {
  <F extends abstract new (...args: never[]) => unknown>(target: F): void;
  (value: abstract new (...args: never[]) => unknown, context: ClassDecoratorContext): void;
}
export interface UniversalMethodDecorator {
  (target: object, propertyKey: string | symbol, descriptor?: PropertyDescriptor): void;
  (value: (...args: never[]) => unknown, context: ClassMethodDecoratorContext): void;
}
interface UniversalFieldDecorator {
  (target: object, propertyKey: string | symbol): void;
  (value: undefined, context: ClassFieldDecoratorContext): void;
}

/**
 * Marks a class as an RPC service. `name` is the interface name of the path
 * (`/greet.GreetService/Greet`); it defaults to the class name.
 */
export function Service(name?: string, options: ServiceOptions = {}): UniversalClassDecorator {
  return (target: object, context?: unknown) => {
    if (context !== undefined && (!isStandard(context) || context.kind !== "class")) {
      throw new TypeError("@Service belongs on a class");
    }
    const raw: RawService = { name, options };
    defineMeta(SERVICE_KEY, raw, target);
    definedServices().add(target);
  };
}

/**
 * Every `@Service` class defined in this process, in definition order: what `triple-rpc proto`
 * falls back to for a module that defines services without exporting them. Kept on a global
 * symbol so the package's CommonJS and ESM entry points share it.
 */
export function definedServices(): Set<object> {
  const key = Symbol.for("triple-rpc:defined-services");
  const g = globalThis as Record<symbol, Set<object> | undefined>;
  let set = g[key];
  if (!set) g[key] = set = new Set();
  return set;
}

/** Adds or merges one method's options into a list of raw methods. */
function upsertMethod(list: RawMethod[], propertyKey: string, options: MethodOptions): void {
  const i = list.findIndex((m) => m.propertyKey === propertyKey);
  const entry = { propertyKey, options: { ...(i >= 0 ? list[i].options : {}), ...options } };
  if (i >= 0) list[i] = entry;
  else list.push(entry);
}

export function methodDecorator(options: MethodOptions): UniversalMethodDecorator {
  return (target: unknown, key: unknown) => {
    if (isStandard(key)) {
      if (key.kind !== "method") throw new TypeError(`@Method belongs on a method, not a ${key.kind}`);
      upsertMethod(ownList<RawMethod>(key, METHODS_KEY, "@Method"), memberName(key, "@Method"), options);
      return;
    }
    if (typeof key !== "string") throw new TypeError("@Method needs a string-named method");
    const t = target as object;
    const list: RawMethod[] = hasOwnMeta(METHODS_KEY, t) ? (getMeta(METHODS_KEY, t) as RawMethod[]) : [...(getMeta<RawMethod[]>(METHODS_KEY, t) ?? [])];
    upsertMethod(list, key, options);
    defineMeta(METHODS_KEY, list, t);
  };
}

/**
 * The raw methods of a class: legacy decorators keep them on the prototype (our metadata store),
 * standard ones on the class's `Symbol.metadata`.
 */
export function rawMethodsOf(ctor: abstract new (...args: never[]) => unknown): RawMethod[] {
  const legacy = getMeta<RawMethod[]>(METHODS_KEY, ctor.prototype);
  return [...(legacy ?? standardMetadata<RawMethod[]>(ctor, METHODS_KEY) ?? [])];
}

/** A value of a class's standard (TC39) decorator metadata, inherited ones included. */
function standardMetadata<T>(ctor: object, key: symbol): T | undefined {
  const meta = (ctor as Record<symbol, Record<symbol, unknown> | undefined>)[SYMBOL_METADATA];
  return meta?.[key] as T | undefined;
}

/** The `params` of `@Method`'s options, as the compiler infers them (a tuple for a literal list). */
export type MethodParams = MethodOptions["params"];

/**
 * Exposes a method as an RPC. `@Method("Greet")` sets the wire name; by default the router
 * accepts the method name and the same name with its first letter upper-cased. A literal
 * `params` list is checked against the method's signature at compile time: `@Method({ params:
 * [String] }) greet(name: number)` does not compile (see {@link ValueOf} for what each type is;
 * with `kind: "client_streaming"` or `"bidi_streaming"` an entry is one message's type and the
 * parameter an `AsyncIterable` of them).
 */
export function Method<const P extends MethodParams = undefined, const K extends MethodKind | undefined = undefined>(
  nameOrOptions?: string | (Omit<MethodOptions, "params" | "kind"> & { params?: P; kind?: K }),
): TypedMethodDecorator<P, K> {
  return methodDecorator(typeof nameOrOptions === "string" ? { name: nameOrOptions } : (nameOrOptions ?? {})) as TypedMethodDecorator<P, K>;
}

/** A server-streaming method: takes its arguments, returns an `AsyncIterable` (e.g. an async generator). */
export function ServerStream(name?: string): UniversalMethodDecorator {
  return methodDecorator({ name, kind: "server_streaming" });
}

/** A client-streaming method: takes an `AsyncIterable` of requests, returns one response. */
export function ClientStream(name?: string): UniversalMethodDecorator {
  return methodDecorator({ name, kind: "client_streaming" });
}

/** A bidi-streaming method: takes an `AsyncIterable` of requests, returns an `AsyncIterable`. */
export function BidiStream(name?: string): UniversalMethodDecorator {
  return methodDecorator({ name, kind: "bidi_streaming" });
}

/** True for an options object (rather than a type spec: a constructor, `[T]` or a `TypeDesc`). */
function isOptionsObject(x: unknown, keys: readonly string[]): boolean {
  if (typeof x !== "object" || x === null || Array.isArray(x) || "kind" in x) return false;
  return keys.some((k) => k in x) || Object.keys(x).length === 0;
}

export function isParamOptions(x: unknown): x is ParamOptions & { context?: boolean } {
  return isOptionsObject(x, ["name", "type", "optional", "tag", "context", "in", ...CONSTRAINT_KEYS]);
}

/**
 * The parameters `@Method({ params })` declares, as parameter decorators would have recorded
 * them; undefined when the option is absent.
 */
export function declaredParams(options: MethodOptions, where: string): RawParam[] | undefined {
  const list = options.params;
  if (list === undefined) return undefined;
  if (!Array.isArray(list)) throw new TypeError(`${where}: @Method({ params }) must be an array, one entry per parameter`);
  return list.map((p, index): RawParam => {
    if (isParamOptions(p)) {
      if (p.context === true) return { index, source: "context", options: {} };
      const { context: _, ...rest } = p;
      return { index, source: "body", options: rest };
    }
    return { index, source: "body", options: { type: p as TypeSpec } };
  });
}

export function paramDecorator(source: RawParam["source"], options: ParamOptions): ParameterDecorator {
  return (target, propertyKey, index) => {
    if (typeof propertyKey !== "string") throw new TypeError("@Param belongs on method parameters");
    const all: Record<string, RawParam[]> = hasOwnMeta(PARAMS_KEY, target)
      ? (getMeta(PARAMS_KEY, target) as Record<string, RawParam[]>)
      : { ...(getMeta<Record<string, RawParam[]>>(PARAMS_KEY, target) ?? {}) };
    const list = [...(all[propertyKey] ?? [])].filter((p) => p.index !== index);
    list.push({ index, source, options });
    all[propertyKey] = list;
    defineMeta(PARAMS_KEY, all, target);
  };
}

/**
 * Declares a bound parameter. `@Param()` takes the type from metadata; `@Param("name")` names it
 * for binding by name; `@Param(Type)` or `@Param({ name, type })` overrides the type where
 * metadata cannot tell (array elements, map values, unions).
 */
export function Param(spec?: string | TypeSpec | ParamOptions): ParameterDecorator {
  if (typeof spec === "string") return paramDecorator("body", { name: spec });
  if (spec === undefined) return paramDecorator("body", {});
  if (isParamOptions(spec)) return paramDecorator("body", spec);
  return paramDecorator("body", { type: spec as TypeSpec });
}

/** Injects the call's {@link CallContext} (headers, deadline, signal, peer, response headers). */
export function Ctx(): ParameterDecorator {
  return paramDecorator("context", {});
}

function isFieldOptions(x: unknown): x is FieldOptions {
  return isOptionsObject(x, ["type", "optional", "tag", ...CONSTRAINT_KEYS]);
}

/**
 * Declares a field of a bindable class; the type comes from `design:type` unless given
 * (`@Field(Type)` or `@Field({ type })`). Fields are required: a request without one is a 400
 * naming it (`parameter #1 (item).name is missing`), unless `@Field({ optional: true })`. With
 * standard decorators, or a compiler that emits no metadata (esbuild, tsx), give the type.
 * Validation constraints go in the same options (`@Field({ type: String, maxLength: 40,
 * pattern: /^[a-z]+$/ })`, see {@link Constraints}). A declared type is checked against the
 * property's by the compiler (`@Field(Number) sku!: string` does not compile).
 */
export function Field<const X extends TypeSpec | FieldOptions | undefined = undefined>(typeOrOptions?: X): TypedFieldDecorator<X> {
  return fieldDecorator(isFieldOptions(typeOrOptions) ? typeOrOptions : { type: typeOrOptions as TypeSpec | undefined }) as unknown as TypedFieldDecorator<X>;
}

function fieldDecorator(options: FieldOptions): UniversalFieldDecorator {
  return (target: unknown, key: unknown) => {
    if (isStandard(key)) {
      if (key.kind !== "field" && key.kind !== "accessor") throw new TypeError(`@Field belongs on a field, not a ${key.kind}`);
      const name = memberName(key, "@Field");
      const list = ownList<RawField>(key, FIELDS_KEY, "@Field");
      const entry: RawField = {
        name,
        spec: options.type,
        optional: options.optional === true,
        tag: options.tag,
        constraints: pickConstraints(options),
      };
      const i = list.findIndex((f) => f.name === name);
      if (i >= 0) list[i] = entry;
      else list.push(entry);
      return;
    }
    if (typeof key !== "string") throw new TypeError("@Field needs a string-named property");
    recordField(target as object, key, options);
  };
}
