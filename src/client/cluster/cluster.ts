// Owns `providersOf`, `selectProvider`, `runAttempt`, `retryable`. The providers of the
// invocation's service; `unavailable` when there are none. Must not change: the documented retry
// and failure semantics of the policy.
import { Code } from "../../protocol/code.js";
import { retryableCode } from "../../protocol/retry-rule.js";
import { RpcError } from "../../protocol/rpc-error.js";
import { isConnectFailure, requestMayHaveRun } from "../../transport/client/errors.js";
import type { Logger } from "../../runtime/logger.js";
import type { LoadBalancer } from "../loadbalance/load-balancer.js";
import type { Provider } from "../../transport/client/provider.js";
import type { Directory } from "./directory.js";
import type { Attempt, Invocation } from "../../runtime/invocation.js";
import { countFailure, type OutlierSettings } from "./outlier.js";
import { attemptTimedOut, type TunedBalancers } from "./tuning.js";

export type { Attempt, Invocation } from "../../runtime/invocation.js";

/** The cluster policies. */
export type ClusterPolicyName = "failover" | "failfast" | "failsafe" | "failback" | "forking" | "broadcast";

/** What a policy works with. */
export interface ClusterContext {
  readonly directory: Directory;
  readonly balancer: LoadBalancer;
  readonly retries: number;
  readonly forks: number;
  readonly downBackoffMs: number;
  readonly failbackIntervalMs: number;
  /** Where the client logs (a provider marked down, …). */
  readonly logger?: Logger;
  /** Outlier detection; none when undefined. */
  readonly outlier?: OutlierSettings;
  /** Balancers a provider URL or a configurator may name (Dubbo's `loadbalance`); registry directories only. */
  readonly tuned?: TunedBalancers;
}

/** A cluster policy: how a call uses the providers (one, several, retrying). */
export interface ClusterPolicy {
  readonly name: string;
  invoke<T>(inv: Invocation, attempt: Attempt<T>, ctx: ClusterContext): Promise<T>;
}

/** The providers of the invocation's service; `unavailable` when there are none. */
export function providersOf(inv: Invocation, ctx: ClusterContext): readonly Provider[] {
  const all = ctx.directory.list(inv.method.serviceName, inv);
  if (all.length === 0) {
    // Routing rules may have kept none of the providers: the directory says which rule did.
    const why = ctx.directory.explainEmpty?.(inv);
    throw new RpcError(
      Code.Unavailable,
      `no provider available for the service ${inv.method.serviceName} in the registry ${ctx.directory.registry}${why ? `: ${why}` : ""}`,
    );
  }
  return all;
}

/**
 * Picks a provider for the next attempt: an available one (not down, not ejected, not on
 * probation with its probe in flight) not tried yet; else an available one; else (none
 * available) an untried one, else any, so a call still gets its attempts when all are down.
 */
export function selectProvider(inv: Invocation, ctx: ClusterContext, tried: ReadonlySet<Provider>): Provider {
  const all = providersOf(inv, ctx);
  if (all.length === 1) return all[0];
  const now = all[0].clock.now();
  // The common case, every provider available and none tried: the list as it is, no copy.
  const balancer = ctx.tuned?.pick(all, inv) ?? ctx.balancer;
  if (tried.size === 0 && allAvailable(all, now)) return balancer.select(all, inv);
  let candidates: readonly Provider[] = all.filter((p) => !tried.has(p) && p.available(now));
  if (candidates.length === 0) candidates = all.filter((p) => p.available(now));
  if (candidates.length === 0) candidates = all.filter((p) => !tried.has(p));
  if (candidates.length === 0) candidates = all;
  return candidates.length === 1 ? candidates[0] : balancer.select(candidates, inv);
}

function allAvailable(all: readonly Provider[], now: number): boolean {
  for (let i = 0; i < all.length; i++) if (!all[i].available(now)) return false;
  return true;
}

/** Runs one attempt of `inv` with the bookkeeping the balancers, health checks and outlier detection read. */
export function runAttempt<T>(provider: Provider, attempt: Attempt<T>, ctx: ClusterContext, inv: Invocation): Promise<T> {
  const start = performance.now();
  provider.begin(start);
  let pending: Promise<T>;
  try {
    pending = attempt(provider);
  } catch (e) {
    pending = Promise.reject(e);
  }
  // One `then`, no async frame: this runs for every call.
  return pending.then(
    (v) => {
      const now = performance.now();
      provider.end(start);
      provider.answered();
      provider.recordLatency(now - start, now);
      return v;
    },
    (e: unknown) => {
      attemptFailed(provider, start, e, ctx, inv);
      throw e;
    },
  );
}

/**
 * The bookkeeping of a failed attempt: a refused connection marks the provider down; a timeout
 * or a broken call counts against it (outlier detection) and as latency; any other answer shows
 * it reachable.
 */
function attemptFailed(provider: Provider, start: number, e: unknown, ctx: ClusterContext, inv: Invocation): void {
  const now = performance.now();
  provider.end(start);
  if (isConnectFailure(e)) {
    markDown(provider, ctx, e);
    return;
  }
  if (!(e instanceof RpcError) || e.code === Code.Cancelled) return;
  provider.recordLatency(now - start, now);
  if (e.code === Code.DeadlineExceeded || e.code === Code.Unavailable) {
    if (ctx.outlier) countFailure(provider, ctx.directory.list(inv.method.serviceName), ctx.outlier, ctx.logger);
  } else {
    provider.answered(); // it answered: reachable, whatever it said
  }
}

/**
 * A provider that refused a connection is skipped for a while; the log says so (once per cause),
 * unless the provider announced its shutdown (`leaving`): then the refusal is expected.
 */
function markDown(provider: Provider, ctx: ClusterContext, err: unknown): void {
  provider.markDown(ctx.downBackoffMs);
  if (provider.leaving) return;
  const skipMs = provider.downUntil - provider.clock.now();
  ctx.logger?.warn({ provider: provider.address, skipMs, err }, `provider ${provider.address} is unreachable: ${(err as Error).message}`);
}

/**
 * True when another attempt may follow this error: never once a response message arrived, and
 * after a connection that broke once the request was sent only for an idempotent method. The
 * codes: `retryableCode` (protocol/retry-rule.ts), the table the web client applies too.
 */
export function retryable(err: RpcError, inv: Invocation): boolean {
  if (inv.committed || inv.signal.aborted) return false;
  // A provider's own timeout ended the attempt (the call has time left): the handler may have run.
  if (requestMayHaveRun(err) || attemptTimedOut(err)) return inv.method.idempotent;
  return retryableCode(err.code, inv.method.idempotent);
}
