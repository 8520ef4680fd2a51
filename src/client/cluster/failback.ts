// Owns `failback`. failback: one attempt. Must not change: the documented retry and failure
// semantics of the policy.
import { RpcError } from "../../protocol/rpc-error.js";
import type { Provider } from "../../transport/client/provider.js";
import { type ClusterPolicy, retryable, runAttempt, selectProvider } from "./cluster.js";
import { failfast } from "./failfast.js";

/**
 * failback: one attempt; on failure the call resolves to `undefined` at once and is retried in
 * the background every `failbackIntervalMs`, up to `retries` times (for notifications that must
 * arrive eventually), for the errors failover would retry (a call that may have run is sent again
 * only when idempotent). Streaming calls fail as usual.
 */
export const failback: ClusterPolicy = {
  name: "failback",
  async invoke<T>(...a: Parameters<ClusterPolicy["invoke"]>) {
    const [inv, attempt, ctx] = a;
    try {
      return (await failfast.invoke(...a)) as T;
    } catch (e) {
      if (inv.streaming) throw e;
      let left = inv.retries;
      const again = (err: unknown) => {
        if (left-- <= 0 || !retryable(RpcError.from(err), inv)) return;
        const timer = setTimeout(() => {
          const p: Provider = selectProvider(inv, ctx, new Set());
          runAttempt(p, attempt, ctx, inv).catch(again);
        }, ctx.failbackIntervalMs);
        timer.unref();
      };
      again(e);
      return undefined as T;
    }
  },
};
