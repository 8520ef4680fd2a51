import type { Provider } from "../provider.js";
import type { LoadBalancer } from "./load-balancer.js";

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
      const n = candidates.length;
      if (n === 1) return candidates[0];
      const i = Math.floor(Math.random() * n);
      let j = Math.floor(Math.random() * (n - 1));
      if (j >= i) j++;
      const a = candidates[i];
      const b = candidates[j];
      const now = performance.now();
      const ca = cost(a, now);
      const cb = cost(b, now);
      if (ca === cb) return Math.random() < 0.5 ? a : b;
      return ca < cb ? a : b;
    },
  };
}
