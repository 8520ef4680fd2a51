// Owns `broadcast`. broadcast: the call goes to every provider, one after another; it fails if any
// failed (with the last error), else returns the last provider's result. Must not change: the
// documented retry and failure semantics of the policy.
import { RpcError } from "../../protocol/rpc-error.js";
import { type ClusterPolicy, providersOf, runAttempt } from "./cluster.js";
import { failfast } from "./failfast.js";

/**
 * broadcast: the call goes to every provider, one after another; it fails if any failed (with
 * the last error), else returns the last provider's result. For cache invalidation and the like.
 * Streaming calls cannot be broadcast and run as failfast.
 */
export const broadcast: ClusterPolicy = {
  name: "broadcast",
  async invoke<T>(...a: Parameters<ClusterPolicy["invoke"]>) {
    const [inv, attempt, ctx] = a;
    if (inv.streaming) return (await failfast.invoke(...a)) as T;
    let result: unknown;
    let error: RpcError | undefined;
    for (const p of providersOf(inv, ctx)) {
      if (inv.signal.aborted) throw inv.signal.reason;
      try {
        result = await runAttempt(p, attempt, ctx, inv);
      } catch (e) {
        error = RpcError.from(e);
      }
    }
    if (error) throw error;
    return result as T;
  },
};
