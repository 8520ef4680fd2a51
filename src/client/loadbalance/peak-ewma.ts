// Owns `peakEwmaBalancer`. peakewma: two distinct random providers (power of two choices), the
// cheaper wins: latency (peak EWMA, Finagle's and linkerd's … Must not change: the documented
// selection rule; state is per client.
import type { Provider } from "../../transport/client/provider.js";
import type { LoadBalancer } from "./load-balancer.js";
import { pickTwo } from "./p2c.js";

/**
 * A provider's expected cost: its latency — the peak EWMA of answered calls, or the mean age of
 * the calls in flight when that is longer (a provider that stopped answering shows it within
 * milliseconds, before any call times out) — times the calls in flight plus this one, per weight.
 */
function cost(p: Provider, now: number): number {
  const latency = Math.max(p.peakLatencyAt(now), p.pendingAgeMs(now));
  return (latency * (p.active + 1)) / Math.max(p.weight, 1);
}

/**
 * peakewma: two distinct random providers (power of two choices), the cheaper wins: latency
 * (peak EWMA, Finagle's and linkerd's; or the age of the calls still waiting, when longer) ×
 * (calls in flight + 1) / weight. It prefers the providers that answer, and answer fast; a
 * provider that hangs stops getting calls within milliseconds.
 */
export function peakEwmaBalancer(): LoadBalancer {
  return {
    name: "peakewma",
    select(candidates) {
      const now = performance.now();
      return pickTwo(candidates, (p) => cost(p, now));
    },
  };
}
