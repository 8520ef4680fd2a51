// Owns `failover`. failover (the default): up to `retries` + 1 attempts, each on a provider not
// tried yet where there is one, while the error is retryable (`retryable`: unavailable or … Must
// not change: the documented retry and failure semantics of the policy.
import { RpcError } from "../../protocol/rpc-error.js";
import type { Provider } from "../../transport/client/provider.js";
import { type Attempt, type ClusterContext, type ClusterPolicy, type Invocation, providersOf, retryable, runAttempt, selectProvider } from "./cluster.js";
import { failoverError } from "./failover-error.js";

/**
 * failover (the default): up to `retries` + 1 attempts, each on a provider not tried yet where
 * there is one, while the error is retryable (`retryable`: unavailable or unknown, never once a
 * response message arrived). When all attempts fail, the error carries Dubbo's failover sentence
 * and the last error's code, raw message and cause.
 */
const NONE_TRIED: ReadonlySet<Provider> = new Set();

/** The attempts after a failed first one, on providers not tried yet where there are. */
async function retry<T>(inv: Invocation, attempt: Attempt<T>, ctx: ClusterContext, firstProvider: Provider, firstError: RpcError): Promise<T> {
  let last = firstError;
  if (!retryable(last, inv)) throw last;
  const tried = new Set<Provider>([firstProvider]);
  const order: Provider[] = [firstProvider];
  let attempts = 1;
  for (let i = 1; i <= inv.retries; i++) {
    if (inv.signal.aborted) throw inv.signal.reason;
    const p = selectProvider(inv, ctx, tried);
    if (!tried.has(p)) {
      tried.add(p);
      order.push(p);
    }
    attempts++;
    try {
      return await runAttempt(p, attempt, ctx, inv);
    } catch (e) {
      last = RpcError.from(e);
      if (!retryable(last, inv)) throw last;
    }
  }
  const total = providersOf(inv, ctx).length;
  throw failoverError(inv.method.name, inv.method.serviceName, inv.retries, order, total, ctx.directory.registry, last, attempts);
}

export const failover: ClusterPolicy = {
  name: "failover",
  invoke(inv, attempt, ctx) {
    let first: Provider;
    try {
      first = selectProvider(inv, ctx, NONE_TRIED);
    } catch (e) {
      return Promise.reject(e);
    }
    // Without retries the caller gets the attempt's own error, not a "Tried 0 times" sentence.
    if (inv.retries === 0) return runAttempt(first, attempt, ctx, inv);
    // The first attempt allocates nothing but its promise: most calls succeed on it.
    return runAttempt(first, attempt, ctx, inv).catch((e: unknown) => retry(inv, attempt, ctx, first, RpcError.from(e)));
  },
};
