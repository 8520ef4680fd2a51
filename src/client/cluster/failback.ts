import type { Provider } from "../provider.js";
import { type ClusterPolicy, runAttempt, selectProvider } from "./cluster.js";
import { failfast } from "./failfast.js";

/**
 * failback: one attempt; on failure the call resolves to `undefined` at once and is retried in
 * the background every `failbackIntervalMs`, up to `retries` times (for notifications that must
 * arrive eventually). Streaming calls fail as usual.
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
      const again = () => {
        if (left-- <= 0) return;
        const timer = setTimeout(() => {
          const p: Provider = selectProvider(inv, ctx, new Set());
          runAttempt(p, attempt, ctx, inv).catch(again);
        }, ctx.failbackIntervalMs);
        timer.unref();
      };
      again();
      return undefined as T;
    }
  },
};
