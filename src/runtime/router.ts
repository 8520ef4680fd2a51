// Owns `Router`. Maps `/<interface>/<method>` plus `tri-service-version` / `tri-service-group` to
// one registered method. Lookups are one Map get in the common case (no version or group). Must not
// change: the rules every protocol relies on (docs/architecture.md).
import { Code } from "../protocol/code.js";
import { firstHeader, H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor, ServiceDescriptor } from "../service/descriptors.js";
import type { HandlerErrors } from "./handler-errors.js";
import type { CallContext } from "./context.js";
import { cutText, quote } from "../protocol/wire-text.js";
import { didYouMean, nearestNames } from "./nearest.js";

/** A method ready to call: its descriptor and the precomputed invoker (interceptors included). */
export interface RegisteredMethod {
  readonly descriptor: MethodDescriptor;
  readonly service: ServiceDescriptor;
  /** Calls the implementation through the interceptor chain. */
  readonly invoke: (ctx: CallContext, input: unknown[]) => unknown;
  /**
   * True when code outside the server sees the call's context: the method takes `@Ctx()`, or
   * interceptors or bearer auth run. When false, the request headers need not outlive dispatch.
   */
  readonly seesContext: boolean;
  /** Turns what the handler threw into the caller's RpcError, logging unexpected errors. */
  readonly errors: HandlerErrors;
  /**
   * Bearer authentication of the call on its request headers, run by every protocol before the
   * body is read; undefined for methods that need none (the common case costs one check).
   */
  readonly authorize: ((ctx: CallContext) => Promise<void>) | undefined;
}

interface Route {
  /** The registration without version and group, reached by requests that name neither. */
  plain: RegisteredMethod | undefined;
  /** Registrations by `version\0group`. */
  variants: Map<string, RegisteredMethod>;
}

function variantKey(version: string, group: string): string {
  return `${version}\0${group}`;
}

/** A path nothing is registered under is HTTP 404 in every protocol that uses HTTP statuses. */
const NO_ROUTE = { httpStatus: 404 } as const;

/**
 * Maps `/<interface>/<method>` plus `tri-service-version` / `tri-service-group` to one
 * registered method. Lookups are one Map get in the common case (no version or group).
 */
export class Router {
  private readonly routes = new Map<string, Route>();
  private readonly services = new Set<string>();

  add(path: string, m: RegisteredMethod): void {
    let r = this.routes.get(path);
    if (!r) {
      r = { plain: undefined, variants: new Map() };
      this.routes.set(path, r);
    }
    const { version, group } = m.service;
    if (!version && !group) {
      if (r.plain && r.plain.service !== m.service) throw new TypeError(`${path} is registered twice`);
      r.plain = m;
    } else {
      const k = variantKey(version, group);
      if (r.variants.has(k) && r.variants.get(k)?.service !== m.service) {
        throw new TypeError(`${path} version "${version}" group "${group}" is registered twice`);
      }
      r.variants.set(k, m);
    }
    this.services.add(m.service.name);
  }

  /**
   * Removes every method of one registration (a service descriptor as added): its paths answer
   * `unimplemented` again unless another version or group of them remains. Calls already
   * dispatched finish.
   */
  removeService(service: ServiceDescriptor): void {
    let nameLeft = false;
    for (const [path, r] of this.routes) {
      if (r.plain?.service === service) r.plain = undefined;
      for (const [k, m] of r.variants) if (m.service === service) r.variants.delete(k);
      if (!r.plain && r.variants.size === 0) this.routes.delete(path);
      else if (!nameLeft) nameLeft = [r.plain, ...r.variants.values()].some((m) => m?.service.name === service.name);
    }
    if (!nameLeft) this.services.delete(service.name);
  }

  /** True when a method is registered under `path` (in some version and group). */
  serves(path: string): boolean {
    return this.routes.has(path);
  }

  /** The wire names of a service's methods, as registered (each once, in the case it was declared). */
  private *methodsOf(service: string): Generator<string> {
    const prefix = `/${service}/`;
    for (const [path, r] of this.routes) {
      if (!path.startsWith(prefix)) continue;
      const m = r.plain ?? r.variants.values().next().value;
      // Each method answers under two paths (first letter in either case): name it once.
      if (m && path.slice(prefix.length) === m.descriptor.name) yield m.descriptor.name;
    }
  }

  /** Every path a method is registered under. */
  paths(): IterableIterator<string> {
    return this.routes.keys();
  }

  hasService(name: string): boolean {
    return this.services.has(name);
  }

  /** Resolves a call or throws `unimplemented` (404, legacy 60) with a message naming what is missing. */
  resolve(path: string, headers: Readonly<Record<string, string | string[] | undefined>>): RegisteredMethod {
    const r = this.routes.get(path);
    const version = firstHeader(headers, H.triServiceVersion) ?? "";
    const group = firstHeader(headers, H.triServiceGroup) ?? "";
    if (r) {
      if (!version && !group && r.plain) return r.plain;
      const hit = r.variants.get(variantKey(version, group));
      if (hit) return hit;
    }
    const slash = path.lastIndexOf("/");
    const service = path.slice(1, Math.max(1, slash));
    const method = path.slice(slash + 1);
    if (slash <= 0 || !this.services.has(service)) {
      const near = slash > 0 ? didYouMean(nearestNames(service, this.services)) : "";
      throw new RpcError(Code.Unimplemented, `service not found: ${cutText(service || path)}${near}`, NO_ROUTE);
    }
    if (!r) {
      const near = didYouMean(nearestNames(method, this.methodsOf(service)));
      throw new RpcError(Code.Unimplemented, `method not found: ${cutText(method)} in service ${service}${near}`, NO_ROUTE);
    }
    throw new RpcError(Code.Unimplemented, `no implementation of service ${service} with version ${quote(version)} and group ${quote(group)}`, NO_ROUTE);
  }
}
