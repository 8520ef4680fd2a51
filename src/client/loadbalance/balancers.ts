// Owns `loadBalancer`. A fresh balancer of a name (state is per client), or a custom one as it is.
// Must not change: the documented selection rule; state is per client.
import { consistentHashBalancer } from "./consistent-hash.js";
import { leastActiveBalancer } from "./least-active.js";
import type { LoadBalancer, LoadBalancerName } from "./load-balancer.js";
import { p2cBalancer } from "./p2c.js";
import { peakEwmaBalancer } from "./peak-ewma.js";
import { randomBalancer } from "./random.js";
import { roundRobinBalancer } from "./round-robin.js";

const FACTORIES: Readonly<Record<LoadBalancerName, () => LoadBalancer>> = {
  random: randomBalancer,
  roundrobin: roundRobinBalancer,
  leastactive: leastActiveBalancer,
  consistenthash: consistentHashBalancer,
  p2c: p2cBalancer,
  peakewma: peakEwmaBalancer,
};

/**
 * A fresh balancer of a name (state is per client), or a custom one as it is. The default is
 * peakewma: with a provider frozen under load it kept every call after the first second, where
 * random lost half of them (bench/freeze.mjs, docs/client.md).
 */
export function loadBalancer(b: LoadBalancerName | LoadBalancer | undefined): LoadBalancer {
  if (b === undefined) return peakEwmaBalancer();
  if (typeof b === "object") return b;
  if (!Object.hasOwn(FACTORIES, b)) {
    throw new TypeError(`createClient: unknown load balancer "${b}"; use one of ${Object.keys(FACTORIES).join(", ")}`);
  }
  return FACTORIES[b]();
}
