// Owns `leastActiveBalancer`. leastactive: the provider with the fewest calls in flight; ties
// broken by weighted random. Must not change: the documented selection rule; state is per client.
import type { Provider } from "../../transport/client/provider.js";
import { type LoadBalancer, weightedRandom } from "./load-balancer.js";

/** leastactive: the provider with the fewest calls in flight; ties broken by weighted random. */
export function leastActiveBalancer(): LoadBalancer {
  return {
    name: "leastactive",
    select(candidates) {
      let least = Number.POSITIVE_INFINITY;
      let ties: Provider[] = [];
      for (const p of candidates) {
        if (p.active < least) {
          least = p.active;
          ties = [p];
        } else if (p.active === least) {
          ties.push(p);
        }
      }
      return ties.length === 1 ? ties[0] : weightedRandom(ties);
    },
  };
}
