// Owns `authRequirement`, `invokerSeesContext`, `buildInvoker`, `buildAuthorizer`. The auth
// requirement of a method: its own `auth` option, else the server's default. Must not change: the
// rules every protocol relies on (docs/architecture.md).
import { type MethodDescriptor, requestStreams } from "../service/descriptors.js";
import { type AuthOptions, authenticate } from "./auth.js";
import type { CallContext } from "./context.js";
import { compileValidator, validatedStream } from "../codec/validation.js";

/** One call as interceptors see it. */
export interface Call {
  readonly method: MethodDescriptor;
  readonly context: CallContext;
  /**
   * The bound arguments, in order. For client- and bidi-streaming methods, one AsyncIterable of
   * request messages.
   */
  readonly input: unknown[];
}

/** Calls the next interceptor, or the implementation. Resolves to the response (an AsyncIterable for server streams). */
export type Next = (call: Call) => Promise<unknown>;

/**
 * Onion-style, async: an interceptor wraps `next`. It can read and set metadata through
 * `call.context`, put values on the context for handlers, short-circuit by throwing an
 * `RpcError`, or post-process the response.
 *
 * ```ts
 * const logging: Interceptor = (next) => async (call) => {
 *   const t = Date.now();
 *   try { return await next(call); } finally { console.log(call.method.path, Date.now() - t); }
 * };
 * ```
 */
export type Interceptor = (next: Next) => Next;

type Impl = Record<string, (...args: unknown[]) => unknown>;

/** The auth requirement of a method: its own `auth` option, else the server's default. */
function authRequirement(method: MethodDescriptor, auth: AuthOptions | undefined) {
  return method.auth === false ? undefined : (method.auth ?? (auth?.requireByDefault ? true : undefined));
}

/** True when the method, an interceptor or auth can see the call's context. */
export function invokerSeesContext(method: MethodDescriptor, interceptors: readonly Interceptor[], auth?: AuthOptions): boolean {
  return method.contextIndex >= 0 || interceptors.length > 0 || authRequirement(method, auth) !== undefined;
}

type Invoke = (ctx: CallContext, input: unknown[]) => unknown;

/** The implementation called with the bound arguments (the context spliced in where `@Ctx()` asks). */
function directCall(impl: object, method: MethodDescriptor): Invoke {
  const fn = (impl as Impl)[method.propertyKey];
  const ci = method.contextIndex;
  if (ci < 0) return (_ctx, input) => fn.apply(impl, input);
  return (ctx, input) => {
    const args = input.slice();
    args.splice(ci, 0, ctx);
    return fn.apply(impl, args);
  };
}

/**
 * The call with the method's validation constraints checked first (after binding and the
 * interceptors, right before the implementation), on every protocol alike; the call itself when
 * the method has no constraints.
 */
function validating(method: MethodDescriptor, call: Invoke): Invoke {
  const validate = compileValidator(method);
  if (!validate) return call;
  if (requestStreams(method.kind)) {
    return (ctx, input) => call(ctx, [validatedStream(input[0] as AsyncIterable<unknown>, validate)]);
  }
  return (ctx, input) => {
    validate(input);
    return call(ctx, input);
  };
}

/**
 * Builds the per-method invoker once, at registration: a direct call when there are no
 * interceptors (the hot path), the composed chain otherwise.
 */
export function buildInvoker(
  impl: object,
  method: MethodDescriptor,
  interceptors: readonly Interceptor[],
  auth?: AuthOptions,
): (ctx: CallContext, input: unknown[]) => unknown {
  const direct = validating(method, directCall(impl, method));
  // Authentication runs before the body is read (`buildAuthorizer`, called by every protocol);
  // the invoker checks again for a call that reached it unauthenticated, so no path that forgets
  // the early check can bypass it. Interceptors already see `ctx.identity`.
  const requirement = authRequirement(method, auth);
  if (interceptors.length === 0 && requirement === undefined) return direct;
  const base: Next = async (call) => direct(call.context, call.input);
  const chain = interceptors.reduceRight<Next>((next, icpt) => icpt(next), base);
  if (requirement === undefined) return (ctx, input) => chain({ method, context: ctx, input });
  return async (ctx, input) => {
    if (ctx.identity === undefined) await authenticate(ctx, requirement, auth);
    return chain({ method, context: ctx, input });
  };
}

/**
 * The per-method authentication step the protocols run on the request headers, before any byte
 * of the body is read or decoded: undefined when the method needs none. A caller without valid
 * credentials never makes the server parse a body, and learns nothing about the method's
 * arguments.
 */
export function buildAuthorizer(method: MethodDescriptor, auth: AuthOptions | undefined): ((ctx: CallContext) => Promise<void>) | undefined {
  const requirement = authRequirement(method, auth);
  if (requirement === undefined) return undefined;
  return (ctx) => authenticate(ctx, requirement, auth);
}
