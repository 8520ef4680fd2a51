// Owns `lowerFirst`, `describeService`, `pathsOf`, `describeProtoService`. `Greet` → `greet`: the
// JavaScript-style name of a wire name. Must not change: what a decorated class describes (paths,
// parameter order, tags): the wire depends on it.
import type * as protobuf from "protobufjs";
import { declaredParams, type MethodOptions, PARAMS_KEY, type RawMethod, type RawParam, type RawService, rawMethodsOf, SERVICE_KEY } from "./decorators.js";
import type { AuthRequirement, McpToolDescriptor, MethodDescriptor, MethodKind, ParamDescriptor, ServiceDescriptor } from "./descriptors.js";
import { designMeta, getMeta, nodeRequire } from "./metadata.js";
import type * as ProtoFiles from "./proto.js";
import { checkNoRestSources, type DeclaredParam, restMapping } from "./rest.js";
import { checkConstraints, pickConstraints } from "./constraints.js";
import { checkDeclaredType, resolveType, T, type TypeDesc } from "./type-desc.js";
import type { Constraints } from "./constraints.js";

/** Per-registration overrides of a service's version and group. */
export interface RegistrationOptions {
  version?: string;
  group?: string;
}

const cache = new WeakMap<object, ServiceDescriptor>();

function upperFirst(s: string): string {
  return s.length === 0 ? s : s[0].toUpperCase() + s.slice(1);
}
/** `Greet` → `greet`: the JavaScript-style name of a wire name. */
export function lowerFirst(s: string): string {
  return s.length === 0 ? s : s[0].toLowerCase() + s.slice(1);
}

function isAsyncGeneratorFunction(fn: unknown): boolean {
  return typeof fn === "function" && fn.constructor?.name === "AsyncGeneratorFunction";
}

function protoKind(m: protobuf.Method): MethodKind {
  if (m.requestStream && m.responseStream) return "bidi_streaming";
  if (m.requestStream) return "client_streaming";
  if (m.responseStream) return "server_streaming";
  return "unary";
}

/** What describing one class's methods needs to know about the class. */
interface ClassInfo {
  readonly ctor: abstract new (...args: never[]) => unknown;
  readonly name: string;
  readonly proto: Record<string, unknown>;
  readonly protoService: protobuf.Service | undefined;
  /** The .proto rpc each JavaScript method implements. */
  readonly protoByKey: ReadonlyMap<string, protobuf.Method>;
  readonly rawParams: Record<string, RawParam[]>;
  readonly serviceAuth: AuthRequirement | undefined;
  /** `@Service(…, { mcp })`: every unary method is an MCP tool unless it says `mcp: false`. */
  readonly serviceMcp: boolean | undefined;
  readonly checks: DescribeChecks;
}

/**
 * What reading a class checks beyond its shape, and the server-side parts it reads: all of it
 * for a server and the Node client ({@link describeService}); none of it for the web client
 * ({@link describeContract}), which calls RPC paths and validates nothing, so a browser bundle
 * carries no REST, MCP or constraint code.
 */
interface DescribeChecks {
  /** A parameter's validation constraints, checked against its type (returned as they are). */
  constraints(c: Constraints | undefined, t: TypeDesc, where: string): Constraints | undefined;
  /** The constraints of the `@Field`s of the classes a parameter or result type reaches. */
  fields(t: TypeDesc): void;
  http: typeof httpOf;
  mcp: typeof mcpOf;
}

/** Checks the `@Field` constraints of every class `t` reaches (each class once). */
function checkFieldConstraints(t: TypeDesc, seen = new Set<object>()): void {
  if (t.kind === "array") checkFieldConstraints(t.element, seen);
  else if (t.kind === "map") checkFieldConstraints(t.value, seen);
  else if (t.kind === "class" && !seen.has(t.ctor)) {
    seen.add(t.ctor);
    for (const f of t.fields) {
      checkConstraints(f.constraints, f.type, `${t.ctor.name}.${f.name}`);
      checkFieldConstraints(f.type, seen);
    }
  }
}

const FULL_CHECKS: DescribeChecks = { constraints: checkConstraints, fields: checkFieldConstraints, http: httpOf, mcp: mcpOf };

const CLIENT_READ: DescribeChecks = {
  constraints: () => undefined,
  fields: () => {},
  http: (_rm, declared) => ({ http: undefined, params: [...declared] }),
  mcp: () => ({}),
};

/** With a .proto, any method named like an rpc is bound even without @Method. */
function bindProtoMethods(protoService: protobuf.Service, proto: Record<string, unknown>, rawMethods: RawMethod[]) {
  const protoByKey = new Map<string, protobuf.Method>();
  for (const m of protoService.methodsArray) {
    const key = [m.name, lowerFirst(m.name)].find((k) => typeof proto[k] === "function");
    if (key === undefined) continue; // not implemented: calls get unimplemented
    protoByKey.set(key, m);
    if (!rawMethods.some((r) => r.propertyKey === key)) rawMethods.push({ propertyKey: key, options: {} });
  }
  return protoByKey;
}

/**
 * Without `emitDecoratorMetadata` (or under esbuild-based runners, which do not emit it) there
 * are no parameter types, and binding would guess: `["1","2"]` would add up to "12". Refuse at
 * registration unless every bound parameter names its type.
 */
function requireTypes(where: string, arity: number, contextIndex: number, decorated: readonly RawParam[]): void {
  for (let i = 0; i < arity; i++) {
    if (i === contextIndex || decorated.some((p) => p.index === i && p.options.type !== undefined)) continue;
    throw new TypeError(
      `${where}: parameter #${i + 1} has no type, because the compiler emitted no design:paramtypes metadata ` +
        `(standard decorators, esbuild and tsx never do). Declare every parameter's type: ` +
        `@Method({ params: [{ name: "x", type: Number }] }) (any compiler), or @Param({ type: Number }) (experimentalDecorators), ` +
        `or compile with tsc and "experimentalDecorators" + "emitDecoratorMetadata"`,
    );
  }
}

/** What the method's parameter decorators or its `@Method({ params })` declare (not both). */
function decoratedParams(c: ClassInfo, rm: RawMethod, where: string): readonly RawParam[] {
  const declared = declaredParams(rm.options, where);
  const decorated = c.rawParams[rm.propertyKey];
  if (declared && decorated?.length) {
    throw new TypeError(`${where}: declare parameters either with @Method({ params }) or with @Param/@Ctx, not both`);
  }
  return declared ?? decorated ?? [];
}

/** The bound parameters of one method: every JavaScript parameter but the `@Ctx()` one. */
function paramsOf(c: ClassInfo, rm: RawMethod, where: string, pm: protobuf.Method | undefined) {
  const key = rm.propertyKey;
  const fn = c.proto[key] as (...args: unknown[]) => unknown;
  const designTypes = designMeta("design:paramtypes", c.proto, key) as unknown[] | undefined;
  const decorated = decoratedParams(c, rm, where);
  const arity = Math.max(fn.length, designTypes?.length ?? 0, ...decorated.map((p) => p.index + 1));
  const contextIndex = decorated.find((p) => p.source === "context")?.index ?? -1;
  if (!designTypes && !pm) requireTypes(where, arity, contextIndex, decorated);
  const params: DeclaredParam[] = [];
  for (let i = 0; i < arity; i++) {
    if (i === contextIndex) continue;
    const d = decorated.find((p) => p.index === i);
    const pwhere = `${where} parameter #${i + 1}${d?.options.name ? ` (${d.options.name})` : ""}`;
    const type = pm ? T.any : resolveType((d?.options.type ?? designTypes?.[i]) as never, pwhere);
    if (!pm && d?.options.type !== undefined) checkDeclaredType(type, designTypes?.[i], pwhere);
    const tag = d?.options.tag ?? params.length + 1;
    const picked = pickConstraints(d?.options);
    if (pm && picked) {
      throw new TypeError(
        `${pwhere}: validation constraints apply to IDL-less methods; ${pm.name} takes its .proto's request message, whose rules belong in the .proto`,
      );
    }
    const constraints = c.checks.constraints(picked, type, pwhere);
    c.checks.fields(type);
    params.push({ index: i, name: d?.options.name, type, optional: d?.options.optional === true, tag, constraints, declaredIn: d?.options.in });
  }
  checkOptionalOrder(where, params);
  return { params, arity, contextIndex };
}

/** Positional forms (a JSON array, the Dubbo wrapper) can leave out only trailing arguments. */
function checkOptionalOrder(where: string, params: readonly ParamDescriptor[]): void {
  const firstOptional = params.findIndex((p) => p.optional);
  if (firstOptional < 0) return;
  const late = params.slice(firstOptional).find((p) => !p.optional);
  if (late && late.name === undefined) {
    throw new TypeError(
      `${where}: parameter #${late.index + 1} is required but follows an optional one; ` +
        `make the optional parameters the last ones, or name every parameter with @Param("name")`,
    );
  }
}

/** The kind of a method: declared, implied by an async generator, or the .proto's. */
function kindOf(rm: RawMethod, fn: unknown, pm: protobuf.Method | undefined, where: string): MethodKind {
  const kind: MethodKind = rm.options.kind ?? (isAsyncGeneratorFunction(fn) ? "server_streaming" : "unary");
  if (!pm) return kind;
  const k = protoKind(pm);
  if (rm.options.kind && rm.options.kind !== k) throw new TypeError(`${where} is declared ${rm.options.kind} but the .proto says ${k}`);
  return k;
}

/** The method's REST mapping and its parameters' sources (plain parameters when it has none). */
function httpOf(rm: RawMethod, declared: readonly DeclaredParam[], kind: MethodKind, pm: protobuf.Method | undefined, where: string) {
  const mapping = rm.options.http;
  if (mapping === undefined) return { http: undefined, params: checkNoRestSources(declared, where) };
  if (pm) throw new TypeError(`${where} implements a .proto rpc: REST mappings need IDL-less methods (parameters declared in TypeScript)`);
  const { route, params } = restMapping(mapping, declared, kind, where);
  return { http: route, params };
}

function describeMethod(c: ClassInfo, rm: RawMethod): MethodDescriptor {
  const key = rm.propertyKey;
  const where = `${c.ctor.name}.${key}`;
  const fn = c.proto[key];
  if (typeof fn !== "function") throw new TypeError(`${where} is not a method`);
  const pm = c.protoByKey.get(key) ?? c.protoService?.methods[rm.options.name ?? ""] ?? undefined;
  const wireName = rm.options.name ?? pm?.name ?? key;
  const kind = kindOf(rm, fn, pm, where);
  const declared = paramsOf(c, rm, where, pm);
  const { arity, contextIndex } = declared;
  const { http, params } = c.checks.http(rm, declared.params, kind, pm, where);
  if (pm && params.length !== 1) {
    throw new TypeError(`${where} implements rpc ${pm.name} and must take exactly one request parameter`);
  }
  if (kind !== "unary" && kind !== "server_streaming" && params.length !== 1) {
    throw new TypeError(`${where} is ${kind} and must take exactly one parameter (the request stream)`);
  }
  const returns = rm.options.returns === undefined ? undefined : resolveType(rm.options.returns, `${where} result`);
  if (returns) c.checks.fields(returns);
  const retries = rm.options.retries;
  if (retries !== undefined && !(Number.isInteger(retries) && retries >= 0)) {
    throw new TypeError(`${where}: @Method({ retries }) must be a whole number >= 0, got ${retries}`);
  }
  const idempotent = idempotencyOf(rm.options.idempotent, pm, kind, where);
  return {
    serviceName: c.name,
    name: wireName,
    path: `/${c.name}/${wireName}`,
    propertyKey: key,
    kind,
    params,
    arity,
    returns,
    retries,
    idempotent,
    contextIndex,
    requestType: pm?.resolvedRequestType ?? undefined,
    responseType: pm?.resolvedResponseType ?? undefined,
    auth: rm.options.auth ?? c.serviceAuth,
    http,
    description: rm.options.description,
    ...c.checks.mcp(rm.options.mcp, c.serviceMcp, kind, where),
  };
}

const MCP_KEYS: ReadonlySet<string> = new Set(["name", "title", "description", "destructive"]);

/** `{ mcp }` when the method is an MCP tool (its own opt-in, or its service's for a unary method). */
function mcpOf(option: MethodOptions["mcp"], service: boolean | undefined, kind: MethodKind, where: string): { mcp?: McpToolDescriptor } {
  if (service !== undefined && typeof service !== "boolean") {
    throw new TypeError(`${where}: @Service({ mcp }) must be true or false, got ${JSON.stringify(service)}`);
  }
  if (option === undefined) return service === true && kind === "unary" ? { mcp: {} } : {};
  if (option === false) return {};
  if (option !== true && (typeof option !== "object" || option === null || Array.isArray(option))) {
    throw new TypeError(`${where}: @Method({ mcp }) must be true, false or { name, title, description, destructive }, got ${JSON.stringify(option)}`);
  }
  if (kind !== "unary") {
    throw new TypeError(
      `${where} is ${kind.replace("_", "-")}: only unary methods can be MCP tools (a tool call returns one result); remove @Method({ mcp }) or offer a unary method`,
    );
  }
  if (option === true) return { mcp: {} };
  for (const k of Object.keys(option)) {
    if (!MCP_KEYS.has(k)) throw new TypeError(`${where}: @Method({ mcp }) has no option ${JSON.stringify(k)}; use name, title, description or destructive`);
  }
  for (const k of ["name", "title", "description"] as const) {
    if (option[k] !== undefined && (typeof option[k] !== "string" || option[k] === "")) {
      throw new TypeError(`${where}: @Method({ mcp: { ${k} } }) must be a non-empty string, got ${JSON.stringify(option[k])}`);
    }
  }
  if (option.name !== undefined && !MCP_TOOL_NAME.test(option.name)) {
    throw new TypeError(`${where}: MCP tool name ${JSON.stringify(option.name)} must be 1 to 64 of A-Z a-z 0-9 _ - . (what MCP clients accept)`);
  }
  if (option.destructive !== undefined && typeof option.destructive !== "boolean") {
    throw new TypeError(`${where}: @Method({ mcp: { destructive } }) must be true or false, got ${JSON.stringify(option.destructive)}`);
  }
  return { mcp: { ...option } };
}

/** What MCP tool names may be: 1 to 64 letters, digits, `_`, `-`, `.`. */
const MCP_TOOL_NAME = /^[A-Za-z0-9_.-]{1,64}$/;

/**
 * service/proto.ts (node:fs and protobufjs's .proto parser), loaded only for a `proto` option
 * naming a file, by a name bundlers do not follow, through the `require` Node.js's contract entry
 * registers (metadata.ts's `nodeRequire`, ids from src/): a contract class then loads in a browser (the web
 * client) without either; a browser passes a loaded protobufjs Root, or no `proto`.
 */
const PROTO_FILES = "./service/proto.js";

function loadProtoFile(file: string): protobuf.Root {
  const req = nodeRequire();
  if (req === undefined) throw new TypeError(`@Service({ proto: "${file}" }): loading a .proto file needs Node.js; pass a loaded protobufjs Root instead`);
  return (req(PROTO_FILES) as typeof ProtoFiles).loadProto(file);
}

/** The service `name` in a loaded root, or a TypeError naming it (service/proto.ts's lookupService, without loading protobufjs). */
function serviceIn(root: protobuf.Root, name: string): protobuf.Service {
  const found = root.lookup(name);
  if (!found || !("methodsArray" in found)) throw new TypeError(`service ${name} is not defined in the given .proto`);
  return found as protobuf.Service;
}

/**
 * Reads a decorated class's metadata into a {@link ServiceDescriptor}. Everything that can be
 * wrong with a class (unbindable types, a proto method with no implementation of the right
 * shape, duplicate names) fails here, at registration, with a message naming the culprit.
 */
export function describeService(ctor: abstract new (...args: never[]) => unknown): ServiceDescriptor {
  return describeWith(ctor, FULL_CHECKS, cache);
}

const contractCache = new WeakMap<object, ServiceDescriptor>();

/**
 * A class read as the web client needs it: names, kinds, parameters and result types, the
 * .proto; without the server's checks and parts (REST mappings, MCP, validation constraints),
 * which a server registering the class still makes.
 */
export function describeContract(ctor: abstract new (...args: never[]) => unknown): ServiceDescriptor {
  return describeWith(ctor, CLIENT_READ, contractCache);
}

function describeWith(ctor: abstract new (...args: never[]) => unknown, checks: DescribeChecks, cache: WeakMap<object, ServiceDescriptor>): ServiceDescriptor {
  const hit = cache.get(ctor);
  if (hit) return hit;
  const raw = getMeta<RawService>(SERVICE_KEY, ctor);
  if (!raw) throw new TypeError(`class ${ctor.name} is not decorated with @Service`);
  const name = raw.name ?? ctor.name;
  const protoOpt = raw.options.proto;
  const protoService = protoOpt ? serviceIn(typeof protoOpt === "string" ? loadProtoFile(protoOpt) : protoOpt, name) : undefined;
  const proto = ctor.prototype as Record<string, unknown>;
  const rawMethods = rawMethodsOf(ctor);
  const protoByKey = protoService ? bindProtoMethods(protoService, proto, rawMethods) : new Map();
  const rawParams = getMeta<Record<string, RawParam[]>>(PARAMS_KEY, proto) ?? {};
  const info: ClassInfo = { ctor, name, proto, protoService, protoByKey, rawParams, serviceAuth: raw.options.auth, serviceMcp: raw.options.mcp, checks };
  const methods: MethodDescriptor[] = [];
  const claimed = new Map<string, MethodDescriptor>();
  for (const rm of rawMethods) {
    const md = describeMethod(info, rm);
    // Upper-first first: a clash is reported in the form gRPC clients use.
    for (const path of [...pathsOf(md)].sort((x, y) => (x < y ? -1 : 1))) {
      const other = claimed.get(path);
      if (other) {
        throw new TypeError(
          `${ctor.name}: methods ${other.propertyKey} and ${md.propertyKey} both answer ${path} ` +
            `(the router accepts a wire name with its first letter in either case); give one of them another name with @Method("...")`,
        );
      }
      claimed.set(path, md);
    }
    methods.push(md);
  }
  if (methods.length === 0) throw new TypeError(noMethods(name, ctor));
  const desc: ServiceDescriptor = {
    name,
    version: raw.options.version ?? "",
    group: raw.options.group ?? "",
    methods,
    proto: protoService,
    description: raw.options.description,
  };
  cache.set(ctor, desc);
  return desc;
}

/**
 * The paths a method answers on: its wire name, and the same with the first letter upper- and
 * lower-cased (Dubbo Java accepts `/greet.GreetService/greet` for a method declared `Greet`).
 */
/** "exposes no methods", with the fix and the class's undecorated methods. */
function noMethods(name: string, ctor: abstract new (...args: never[]) => unknown): string {
  const plain = new Set<string>();
  for (let p = ctor.prototype as object | null; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const key of Object.getOwnPropertyNames(p)) {
      const d = Object.getOwnPropertyDescriptor(p, key);
      if (key !== "constructor" && typeof d?.value === "function") plain.add(key);
    }
  }
  const list = [...plain].slice(0, 8);
  const has = list.length ? `; its methods ${list.join(", ")}${plain.size > list.length ? ", …" : ""} have no @Method()` : "";
  return `service ${name} (${ctor.name}) exposes no methods: mark each method to serve with @Method()${has}`;
}

export function pathsOf(m: MethodDescriptor): string[] {
  const out = [m.path];
  for (const name of [upperFirst(m.name), lowerFirst(m.name)]) {
    const path = `/${m.serviceName}/${name}`;
    if (!out.includes(path)) out.push(path);
  }
  return out;
}

/** True when a .proto method declares `option idempotency_level = NO_SIDE_EFFECTS`. */
function protoNoSideEffects(m: protobuf.Method | undefined): boolean {
  const level = m?.options?.idempotency_level as unknown;
  return level === "NO_SIDE_EFFECTS" || level === 1;
}

/** `@Method({ idempotent })`, else the .proto's idempotency level; only unary methods can be called with GET. */
function idempotencyOf(option: boolean | undefined, pm: protobuf.Method | undefined, kind: MethodKind, where: string): boolean {
  if (option !== undefined && typeof option !== "boolean") {
    throw new TypeError(`${where}: @Method({ idempotent }) must be true or false, got ${JSON.stringify(option)}`);
  }
  const idempotent = option ?? protoNoSideEffects(pm);
  if (idempotent && option === true && kind !== "unary") {
    throw new TypeError(`${where} is ${kind.replace("_", "-")}: only unary methods can be marked idempotent (GET carries one request message)`);
  }
  return idempotent;
}

/**
 * Descriptors of a .proto service without a class (clients built from a .proto): every rpc,
 * one request-message parameter, JavaScript names lower-first.
 */
export function describeProtoService(svc: protobuf.Service): ServiceDescriptor {
  svc.resolveAll();
  const name = svc.fullName.replace(/^\./, "");
  const methods: MethodDescriptor[] = svc.methodsArray.map((m) => ({
    serviceName: name,
    name: m.name,
    path: `/${name}/${m.name}`,
    propertyKey: lowerFirst(m.name),
    kind: protoKind(m),
    params: [{ index: 0, name: undefined, type: T.any, optional: false, tag: 1, constraints: undefined }],
    arity: 1,
    returns: undefined,
    retries: undefined,
    idempotent: protoNoSideEffects(m),
    contextIndex: -1,
    requestType: m.resolvedRequestType ?? undefined,
    responseType: m.resolvedResponseType ?? undefined,
    auth: undefined,
  }));
  return { name, version: "", group: "", methods, proto: svc };
}
