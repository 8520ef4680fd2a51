import type { LoadBalancer } from "./load-balancer.js";

/**
 * p2c (power of two choices): two distinct random providers, the one with fewer calls in flight
 * wins; a tie goes either way at random. Weights scale the load, so a heavier provider carries
 * proportionally more concurrent calls. Unlike least-active over all providers, this avoids
 * herding every caller onto the one provider that looked idle a moment ago.
 */
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
      const la = (a.active + 1) / Math.max(a.weight, 1);
      const lb = (b.active + 1) / Math.max(b.weight, 1);
      if (la === lb) return Math.random() < 0.5 ? a : b;
      return la < lb ? a : b;
    },
  };
}
