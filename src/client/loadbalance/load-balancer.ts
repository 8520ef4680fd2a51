// Owns `weightedRandom`. Weighted random pick (all balancers fall back to it to break ties). Must
// not change: the documented selection rule; state is per client.
import type { Invocation } from "../../runtime/invocation.js";
import type { Provider } from "../../transport/client/provider.js";

/** The load balancers. */
export type LoadBalancerName = "random" | "roundrobin" | "leastactive" | "consistenthash" | "p2c" | "peakewma";

/** Picks one provider among candidates (never empty; usually two or more). */
export interface LoadBalancer {
  readonly name: string;
  select(candidates: readonly Provider[], inv: Invocation): Provider;
}

/** Weighted random pick (all balancers fall back to it to break ties). */
export function weightedRandom(candidates: readonly Provider[]): Provider {
  const n = candidates.length;
  let total = 0;
  let same = true;
  for (let i = 0; i < n; i++) {
    total += candidates[i].weight;
    if (i > 0 && candidates[i].weight !== candidates[0].weight) same = false;
  }
  if (same || total <= 0) return candidates[Math.floor(Math.random() * n)];
  let r = Math.random() * total;
  for (const p of candidates) {
    r -= p.weight;
    if (r < 0) return p;
  }
  return candidates[n - 1];
}
