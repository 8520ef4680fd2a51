import type { Provider } from "../provider.js";
import type { LoadBalancer } from "./load-balancer.js";

function load(p: Provider): number {
  // Calls in flight scaled by observed latency: a slow provider looks busier than a fast one.
  return ((p.active + 1) * Math.max(p.latencyMs, 1)) / Math.max(p.weight, 1);
}

/** p2c (power of two choices): two random providers, the less loaded one wins. */
export function p2cBalancer(): LoadBalancer {
  return {
    name: "p2c",
    select(candidates) {
      const n = candidates.length;
      if (n === 1) return candidates[0];
      const i = Math.floor(Math.random() * n);
      let j = Math.floor(Math.random() * (n - 1));
      if (j >= i) j++;
      const a = candidates[i];
      const b = candidates[j];
      return load(a) <= load(b) ? a : b;
    },
  };
}
