/**
 * Per-provider call settings from the registry and the config center (Dubbo's `timeout`,
 * `loadbalance`, `retries` on a provider URL, a configurator's overrides), resolved per attempt in
 * Dubbo Java's precedence (docs/governance.md, "Configurators"). Nothing here runs for a
 * call unless a provider or a configurator set one of them.
 */
import { Code } from "../../protocol/code.js";
import { RpcError } from "../../protocol/rpc-error.js";
import type { Attempt, Invocation } from "../../runtime/invocation.js";
import type { MethodDescriptor } from "../../service/descriptors.js";
import type { Provider } from "../../transport/client/provider.js";
import { CallScope, NEVER_ABORTS } from "../../transport/client/call-scope.js";
import { MAX_TUNED_RETRIES, MAX_TUNED_TIMEOUT_MS, TUNED_BALANCERS, tuningProblem } from "../../governance/tuning.js";
import { loadBalancer } from "../loadbalance/balancers.js";
import type { LoadBalancer, LoadBalancerName } from "../loadbalance/load-balancer.js";

type Params = Readonly<Record<string, string>>;

/**
 * One provider's settings: the configurators' overrides and the provider URL's own parameters.
 * Java reads an invoker's `timeout` and `loadbalance` as `<method>.<key>` then `<key>`, each from
 * the override, then the consumer, then the provider (`DubboServiceAddressURL`).
 */
export class ProviderTuning {
  constructor(
    private readonly overrides: Params | undefined,
    private readonly own: Params,
  ) {}

  /** The tuning of a provider URL, or undefined when neither side sets a timeout or a balancer. */
  static of(overrides: Params | undefined, own: Params): ProviderTuning | undefined {
    const sets = (p: Params | undefined) =>
      p !== undefined && Object.keys(p).some((k) => k === "timeout" || k === "loadbalance" || k.endsWith(".timeout") || k.endsWith(".loadbalance"));
    return sets(overrides) || sets(own) ? new ProviderTuning(overrides, own) : undefined;
  }

  get timeouts(): boolean {
    return this.has("timeout");
  }

  /**
   * The timeout of an attempt on this provider, ms; undefined when the client's own `timeout`
   * decides (it wins over the provider URL, not over a configurator, as Java's consumer URL does).
   */
  timeoutMs(md: MethodDescriptor, clientMs: number | undefined): number | undefined {
    const v = this.lookup(md, "timeout", clientMs !== undefined);
    return v === undefined ? undefined : Number(v);
  }

  /** Dubbo's balancer name for a call of `md` (undefined: the client's own); `explicit`: the client set one. */
  balancer(md: MethodDescriptor, explicit: boolean): string | undefined {
    return this.lookup(md, "loadbalance", explicit);
  }

  private has(key: string): boolean {
    const sets = (p: Params | undefined) => p !== undefined && Object.keys(p).some((k) => k === key || k.endsWith(`.${key}`));
    return sets(this.overrides) || sets(this.own);
  }

  /**
   * Java's order: override `<m>.key`, provider `<m>.key` (the client has no per-method value),
   * override `key`, the client's own (`client`: it has one; undefined is returned for it),
   * provider `key`. A provider value that is not valid is skipped (Java would fail the call on it).
   */
  private lookup(md: MethodDescriptor, key: "timeout" | "loadbalance", client: boolean): string | undefined {
    const ov = this.overrides;
    const m1 = `${md.propertyKey}.${key}`;
    const m2 = `${md.name}.${key}`;
    const first = ov?.[m1] ?? ov?.[m2] ?? valid(key, this.own[m1]) ?? valid(key, this.own[m2]) ?? ov?.[key];
    if (first !== undefined || client) return first;
    return valid(key, this.own[key]);
  }
}

function valid(key: "timeout" | "loadbalance", v: string | undefined): string | undefined {
  return v !== undefined && tuningProblem(key, v) === undefined ? v : undefined;
}

/** What a directory's providers and the config center set for calls; undefined on a directory when nothing is set. */
export interface DirectoryTuning {
  /** Some provider has a timeout of its own (from its URL or a configurator): unary attempts are timed per provider. */
  readonly timeouts: boolean;
  /** The consumer URL's parameters configurators override (`retries`, `<method>.retries`), if any. */
  readonly consumer: Params | undefined;
}

/** A provider's tuning (providers of a registry directory carry one when they are tuned). */
function tuningOf(p: Provider): ProviderTuning | undefined {
  return (p as { tuning?: ProviderTuning }).tuning;
}

/**
 * The retries of a call when configurators override the consumer URL (Java's failover reads
 * `<m>.retries`, then `retries`, from it): override `<m>.retries`, the method's own (`methods`
 * option, `@Method({ retries })`), override `retries`, the client's.
 */
export function tunedRetries(md: MethodDescriptor, overrides: Params, methodOwn: number | undefined, client: number): number {
  const v = overrides[`${md.propertyKey}.retries`] ?? overrides[`${md.name}.retries`];
  if (v !== undefined) return Math.min(Number(v), MAX_TUNED_RETRIES);
  if (methodOwn !== undefined) return methodOwn;
  return overrides.retries === undefined ? client : Math.min(Number(overrides.retries), MAX_TUNED_RETRIES);
}

/** The balancers a client's calls may be steered to, one of each name (state is per client). */
export class TunedBalancers {
  private readonly made = new Map<string, LoadBalancer>();

  /** `explicit`: the client named its own balancer (it then wins over the provider URL's). */
  constructor(readonly explicit: boolean) {}

  /** The balancer for a call over `providers` (Java reads the first provider's URL), or undefined for the client's. */
  pick(providers: readonly Provider[], inv: Invocation): LoadBalancer | undefined {
    const name = tuningOf(providers[0])?.balancer(inv.method, this.explicit);
    if (name === undefined) return undefined;
    let b = this.made.get(name);
    if (!b) {
      b = loadBalancer(TUNED_BALANCERS.get(name) as LoadBalancerName);
      this.made.set(name, b);
    }
    return b;
  }
}

/** Errors of attempts that a provider's own timeout ended (the call itself still had time). */
const ATTEMPT_TIMEOUTS = new WeakSet<RpcError>();

/** True when `err` ended one attempt on its provider's timeout: another attempt may follow for an idempotent method. */
export function attemptTimedOut(err: RpcError): boolean {
  return ATTEMPT_TIMEOUTS.has(err);
}

/**
 * The attempt of a unary call when providers have timeouts of their own: an attempt on a tuned
 * provider gets that timeout (from its start, as Java times each invocation), bounded by the
 * call's scope (a per-call `timeout`, the caller's signal); any other attempt keeps the client's
 * `timeout`, counted from the call's start as before. `make` builds the attempt in a scope.
 */
export function tunedAttempt<T>(make: (scope: CallScope) => Attempt<T>, scope: CallScope, md: MethodDescriptor, clientMs: number | undefined): Attempt<T> {
  const start = Date.now();
  const plain = make(scope);
  return (p) => {
    const tuned = tuningOf(p)?.timeoutMs(md, clientMs);
    const ms = tuned ?? (clientMs === undefined ? undefined : Math.max(1, Math.min(start + clientMs - Date.now(), MAX_TUNED_TIMEOUT_MS)));
    if (ms === undefined) return plain(p);
    const child = new CallScope(ms, scope.signal === NEVER_ABORTS ? undefined : scope.signal);
    let pending: Promise<T>;
    try {
      pending = make(child)(p);
    } catch (e) {
      pending = Promise.reject(e);
    }
    return pending.then(
      (v) => {
        child.dispose();
        return v;
      },
      (e: unknown) => {
        child.dispose();
        throw timedOut(e, child, scope, tuned, clientMs, p, md);
      },
    );
  };
}

/** The error of an attempt whose own timer fired first: the provider's timeout, or the client's. */
function timedOut(
  e: unknown,
  child: CallScope,
  scope: CallScope,
  tuned: number | undefined,
  clientMs: number | undefined,
  p: Provider,
  md: MethodDescriptor,
): unknown {
  if (!child.signal.aborted || scope.signal.aborted || e !== child.signal.reason) return e;
  if (tuned === undefined) return new RpcError(Code.DeadlineExceeded, `client side timeout: no response within ${clientMs} ms`, { legacyStatus: 30 });
  const err = new RpcError(
    Code.DeadlineExceeded,
    `client side timeout: no response from ${p.address} within ${tuned} ms (the timeout of ${md.propertyKey} on that provider, from its URL or a configurator)`,
    {
      legacyStatus: 30,
    },
  );
  ATTEMPT_TIMEOUTS.add(err);
  return err;
}
