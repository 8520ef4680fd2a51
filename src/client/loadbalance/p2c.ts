// Owns `pickTwo`, `p2cBalancer`. The power of two choices: two distinct random candidates, the one
// of lower `cost` wins; a tie goes either way at random. Must not change: the documented selection
// rule; state is per client.
import type { Provider } from "../../transport/client/provider.js";
import type { LoadBalancer } from "./load-balancer.js";

/**
 * The power of two choices: two distinct random candidates, the one of lower `cost` wins; a tie
 * goes either way at random.
 */
export function pickTwo(candidates: readonly Provider[], cost: (p: Provider) => number): Provider {
  const n = candidates.length;
  if (n === 1) return candidates[0];
  const i = Math.floor(Math.random() * n);
  let j = Math.floor(Math.random() * (n - 1));
  if (j >= i) j++;
  const a = candidates[i];
  const b = candidates[j];
  const ca = cost(a);
  const cb = cost(b);
  if (ca === cb) return Math.random() < 0.5 ? a : b;
  return ca < cb ? a : b;
}

/** Calls in flight (plus this one) per weight. */
const load = (p: Provider): number => (p.active + 1) / Math.max(p.weight, 1);

/**
 * p2c (power of two choices): two distinct random providers, the one with fewer calls in flight
 * wins; a tie goes either way at random. Weights scale the load, so a heavier provider carries
 * proportionally more concurrent calls. Unlike least-active over all providers, this avoids
 * herding every caller onto the one provider that looked idle a moment ago.
 */
export function p2cBalancer(): LoadBalancer {
  return {
    name: "p2c",
    select: (candidates) => pickTwo(candidates, load),
  };
}
