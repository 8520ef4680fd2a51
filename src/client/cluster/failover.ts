import { RpcError } from "../../protocol/rpc-error.js";
import type { Provider } from "../provider.js";
import { type ClusterPolicy, providersOf, retryable, runAttempt, selectProvider } from "./cluster.js";
import { failoverError } from "./failover-error.js";

/**
 * failover (the default): up to `retries` + 1 attempts, each on a provider not tried yet where
 * there is one, while the error is retryable (`retryable`: unavailable or unknown, never once a
 * response message arrived). When all attempts fail, the error carries Dubbo's failover sentence
 * and the last error's code, raw message and cause.
 */
export const failover: ClusterPolicy = {
  name: "failover",
  async invoke(inv, attempt, ctx) {
    const tried = new Set<Provider>();
    const order: Provider[] = [];
    let last: RpcError | undefined;
    let attempts = 0;
    // Without retries the caller gets the attempt's own error, not a "Tried 0 times" sentence.
    if (inv.retries === 0) return runAttempt(selectProvider(inv, ctx, tried), attempt, ctx);
    for (let i = 0; i <= inv.retries; i++) {
      if (inv.signal.aborted) throw inv.signal.reason;
      const p = selectProvider(inv, ctx, tried);
      if (!tried.has(p)) {
        tried.add(p);
        order.push(p);
      }
      attempts++;
      try {
        return await runAttempt(p, attempt, ctx);
      } catch (e) {
        last = RpcError.from(e);
        if (!retryable(last, inv)) throw last;
      }
    }
    throw failoverError(
      inv.method.name,
      inv.method.serviceName,
      inv.retries,
      order,
      providersOf(inv, ctx).length,
      ctx.directory.registry,
      last as RpcError,
      attempts,
    );
  },
};
