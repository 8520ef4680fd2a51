// Owns `randomBalancer`. random (the default): weighted random; equal weights give a uniform pick.
// Must not change: the documented selection rule; state is per client.
import { type LoadBalancer, weightedRandom } from "./load-balancer.js";

/** random (the default): weighted random; equal weights give a uniform pick. */
export function randomBalancer(): LoadBalancer {
  return { name: "random", select: (candidates) => weightedRandom(candidates) };
}
