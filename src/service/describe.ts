import "reflect-metadata";
import * as protobuf from "protobufjs";
import {
  METHODS_KEY,
  type MethodKind,
  PARAMS_KEY,
  type RawMethod,
  type RawParam,
  type RawService,
  SERVICE_KEY,
} from "./decorators.js";
import type { AuthRequirement, MethodDescriptor, ParamDescriptor, ServiceDescriptor } from "./descriptors.js";
import { loadProto, lookupService } from "./proto.js";
import { resolveType, T } from "./type-desc.js";

/** Per-registration overrides of a service's version and group. */
export interface RegistrationOptions {
  version?: string;
  group?: string;
}

const cache = new WeakMap<object, ServiceDescriptor>();

function upperFirst(s: string): string {
  return s.length === 0 ? s : s[0].toUpperCase() + s.slice(1);
}
function lowerFirst(s: string): string {
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

/**
 * Reads a decorated class's metadata into a {@link ServiceDescriptor}. Everything that can be
 * wrong with a class (unbindable types, a proto method with no implementation of the right
 * shape, duplicate names) fails here, at registration, with a message naming the culprit.
 */
export function describeService(ctor: abstract new (...args: never[]) => unknown): ServiceDescriptor {
  const hit = cache.get(ctor);
  if (hit) return hit;
  const raw: RawService | undefined = Reflect.getMetadata(SERVICE_KEY, ctor);
  if (!raw) throw new TypeError(`class ${ctor.name} is not decorated with @Service`);
  const name = raw.name ?? ctor.name;
  const proto = raw.options.proto;
  const protoService = proto
    ? lookupService(typeof proto === "string" ? loadProto(proto) : proto, name)
    : undefined;
  const proto_ = ctor.prototype as Record<string, unknown>;
  const rawMethods: RawMethod[] = [...(Reflect.getMetadata(METHODS_KEY, proto_) ?? [])];
  const rawParams: Record<string, RawParam[]> = Reflect.getMetadata(PARAMS_KEY, proto_) ?? {};
  const serviceAuth = raw.options.auth;

  // With a .proto, any method named like an rpc is bound even without @Method.
  const protoByKey = new Map<string, protobuf.Method>();
  if (protoService) {
    for (const m of protoService.methodsArray) {
      const key = [m.name, lowerFirst(m.name)].find((k) => typeof proto_[k] === "function");
      if (key === undefined) continue; // not implemented: calls get unimplemented
      protoByKey.set(key, m);
      if (!rawMethods.some((r) => r.propertyKey === key)) rawMethods.push({ propertyKey: key, options: {} });
    }
  }

  const methods: MethodDescriptor[] = [];
  const seen = new Set<string>();
  for (const rm of rawMethods) {
    const key = rm.propertyKey;
    const where = `${ctor.name}.${key}`;
    const fn = proto_[key];
    if (typeof fn !== "function") throw new TypeError(`${where} is not a method`);
    const pm = protoByKey.get(key) ?? protoService?.methods[rm.options.name ?? ""] ?? undefined;
    const wireName = rm.options.name ?? pm?.name ?? key;
    if (seen.has(wireName)) throw new TypeError(`${ctor.name}: two methods are exposed as ${wireName}`);
    seen.add(wireName);

    let kind: MethodKind = rm.options.kind ?? (isAsyncGeneratorFunction(fn) ? "server_streaming" : "unary");
    if (pm) {
      const k = protoKind(pm);
      if (rm.options.kind && rm.options.kind !== k) {
        throw new TypeError(`${where} is declared ${rm.options.kind} but the .proto says ${k}`);
      }
      kind = k;
    }

    const designTypes: unknown[] = Reflect.getMetadata("design:paramtypes", proto_, key) ?? [];
    const decorated = rawParams[key] ?? [];
    const arity = Math.max((fn as () => void).length, designTypes.length, ...decorated.map((p) => p.index + 1));
    const contextIndex = decorated.find((p) => p.source === "context")?.index ?? -1;
    const params: ParamDescriptor[] = [];
    for (let i = 0; i < arity; i++) {
      if (i === contextIndex) continue;
      const d = decorated.find((p) => p.index === i);
      const pwhere = `${where} parameter #${i + 1}${d?.options.name ? ` (${d.options.name})` : ""}`;
      const type = pm ? T.any : resolveType((d?.options.type ?? designTypes[i]) as never, pwhere);
      params.push({ index: i, name: d?.options.name, type });
    }
    if (pm && params.length !== 1) {
      throw new TypeError(`${where} implements rpc ${pm.name} and must take exactly one request parameter`);
    }
    if (kind !== "unary" && kind !== "server_streaming" && params.length !== 1) {
      throw new TypeError(`${where} is ${kind} and must take exactly one parameter (the request stream)`);
    }

    const methodAuth = rm.options.auth;
    const auth: AuthRequirement | false | undefined = methodAuth ?? serviceAuth;
    methods.push({
      serviceName: name,
      name: wireName,
      path: `/${name}/${wireName}`,
      propertyKey: key,
      kind,
      params,
      arity,
      contextIndex,
      requestType: pm?.resolvedRequestType ?? undefined,
      responseType: pm?.resolvedResponseType ?? undefined,
      auth,
    });
  }
  if (methods.length === 0) throw new TypeError(`service ${name} (${ctor.name}) exposes no methods`);
  const desc: ServiceDescriptor = {
    name,
    version: raw.options.version ?? "",
    group: raw.options.group ?? "",
    methods,
    proto: protoService,
  };
  cache.set(ctor, desc);
  return desc;
}

/** The paths a method answers on: its wire name and the same with the first letter upper-cased. */
export function pathsOf(m: MethodDescriptor): string[] {
  const up = upperFirst(m.name);
  return up === m.name ? [m.path] : [m.path, `/${m.serviceName}/${up}`];
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
    params: [{ index: 0, name: undefined, type: T.any }],
    arity: 1,
    contextIndex: -1,
    requestType: m.resolvedRequestType ?? undefined,
    responseType: m.resolvedResponseType ?? undefined,
    auth: undefined,
  }));
  return { name, version: "", group: "", methods, proto: svc };
}
