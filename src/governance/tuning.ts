/**
 * The per-call parameters a configurator may set for consumers — Dubbo's `timeout`, `retries`,
 * `loadbalance` and their `<method>.` forms — checked when a rule arrives: a bad value is dropped
 * with one log line naming the rule's key, the rest of the rule applies. The bounds and the
 * balancer names here are the ones docs/governance.md states.
 */
import type { ConfiguratorEntry } from "./configurators.js";

/** The longest timeout a configurator may set, ms (Java's int, and the longest timer Node.js runs). */
export const MAX_TUNED_TIMEOUT_MS = 2_147_483_647;
/** The most retries a configurator may set (each is one more attempt on the call's path). */
export const MAX_TUNED_RETRIES = 100;

/**
 * Dubbo's load-balancer names, and the balancer of ours each selects: the same algorithm where we
 * have it; `shortestresponse` (latency-led) → `peakewma`, `adaptive` (Dubbo's P2C on load) → `p2c`.
 */
export const TUNED_BALANCERS: ReadonlyMap<string, string> = new Map([
  ["random", "random"],
  ["roundrobin", "roundrobin"],
  ["leastactive", "leastactive"],
  ["consistenthash", "consistenthash"],
  ["p2c", "p2c"],
  ["peakewma", "peakewma"],
  ["shortestresponse", "peakewma"],
  ["adaptive", "p2c"],
]);

export type TuningKind = "timeout" | "retries" | "loadbalance";

/**
 * The kind of a tuning parameter: `timeout`, or `<method>.timeout` (one dot, as Java's URL reads
 * a method parameter); undefined for any other parameter.
 */
export function tuningKind(param: string): TuningKind | undefined {
  const dot = param.indexOf(".");
  const base = dot < 0 ? param : param.indexOf(".", dot + 1) < 0 && dot > 0 ? param.slice(dot + 1) : "";
  return base === "timeout" || base === "retries" || base === "loadbalance" ? base : undefined;
}

/** What is wrong with a tuning value, or undefined when it is good. */
export function tuningProblem(kind: TuningKind, value: string): string | undefined {
  if (kind === "loadbalance") {
    return TUNED_BALANCERS.has(value) ? undefined : `is not a load balancer (use one of ${[...TUNED_BALANCERS.keys()].join(", ")})`;
  }
  const n = /^\d{1,12}$/.test(value) ? Number(value) : Number.NaN;
  if (kind === "timeout") return n >= 1 && n <= MAX_TUNED_TIMEOUT_MS ? undefined : `is not a timeout (a whole number of ms from 1 to ${MAX_TUNED_TIMEOUT_MS})`;
  return n >= 0 && n <= MAX_TUNED_RETRIES ? undefined : `is not a retry count (a whole number from 0 to ${MAX_TUNED_RETRIES})`;
}

/**
 * The entries with their bad tuning values dropped; `problem` hears each one (parameter and
 * why). An entry left without parameters stays: it changes nothing.
 */
export function checkedTuning(entries: readonly ConfiguratorEntry[], problem: (text: string) => void): ConfiguratorEntry[] {
  const seen = new Set<string>();
  return entries.map((e) => {
    let params: Record<string, string> | undefined;
    for (const [k, v] of Object.entries(e.parameters)) {
      const kind = tuningKind(k);
      const why = kind && tuningProblem(kind, v);
      if (!why) continue;
      params ??= { ...e.parameters };
      delete params[k];
      const text = `${k}: ${JSON.stringify(v)} ${why}`;
      if (!seen.has(text)) problem(text);
      seen.add(text);
    }
    return params ? { ...e, parameters: params } : e;
  });
}
