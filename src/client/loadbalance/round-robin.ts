// Owns `roundRobinBalancer`. roundrobin: smooth weighted round-robin (nginx's), per method: each
// pick adds every weight to its provider's counter and takes the highest, which then gives back the
// total. Must not change: the documented selection rule; state is per client.
import type { LoadBalancer } from "./load-balancer.js";

/**
 * roundrobin: smooth weighted round-robin (nginx's), per method: each pick adds every weight to
 * its provider's counter and takes the highest, which then gives back the total. Equal weights
 * cycle in order; unequal weights interleave instead of bunching.
 */
export function roundRobinBalancer(): LoadBalancer {
  const state = new Map<string, Map<string, number>>();
  return {
    name: "roundrobin",
    select(candidates, inv) {
      let counters = state.get(inv.method.path);
      if (!counters) state.set(inv.method.path, (counters = new Map()));
      let total = 0;
      let best = candidates[0];
      let bestValue = Number.NEGATIVE_INFINITY;
      for (const p of candidates) {
        const w = Math.max(p.weight, 0);
        const v = (counters.get(p.address) ?? 0) + w;
        counters.set(p.address, v);
        total += w;
        if (v > bestValue) {
          bestValue = v;
          best = p;
        }
      }
      counters.set(best.address, bestValue - total);
      return best;
    },
  };
}
