// Owns `forking`. forking: the same call on `forks` distinct providers at once; the first success
// wins, and the call fails only when all fail (with the last error). Must not change: the
// documented retry and failure semantics of the policy.
import { RpcError } from "../../protocol/rpc-error.js";
import type { Provider } from "../../transport/client/provider.js";
import { type ClusterPolicy, runAttempt, selectProvider } from "./cluster.js";
import { failfast } from "./failfast.js";

/**
 * forking: the same call on `forks` distinct providers at once; the first success wins, and the
 * call fails only when all fail (with the last error). For latency-critical reads. Streaming
 * calls cannot be duplicated and run as failfast.
 */
export const forking: ClusterPolicy = {
  name: "forking",
  invoke(inv, attempt, ctx) {
    if (inv.streaming) return failfast.invoke(inv, attempt, ctx);
    const picked = new Set<Provider>();
    const n = Math.max(1, ctx.forks);
    for (let i = 0; i < n; i++) {
      const p = selectProvider(inv, ctx, picked);
      if (picked.has(p)) break;
      picked.add(p);
    }
    return new Promise((resolve, reject) => {
      let failed = 0;
      for (const p of picked) {
        runAttempt(p, attempt, ctx, inv).then(resolve, (e) => {
          if (++failed === picked.size) reject(RpcError.from(e));
        });
      }
    });
  },
};
