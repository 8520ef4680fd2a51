// Owns `OUTLIER_DEFAULTS`, `outlierSettings`, `countFailure`. The checked settings, or undefined
// when outlier detection is off. Must not change: the documented retry and failure semantics of the
// policy.
import type { Logger } from "../../runtime/logger.js";
import { amount, checked, checkGroup, count, MAX_TIMER_MS, type Rule } from "../../runtime/options-check.js";
import type { Provider } from "../../transport/client/provider.js";

/**
 * Outlier detection (Envoy's consecutive-failure ejection, gRPC's outlier_detection policy): a
 * provider whose calls time out or break `consecutiveFailures` times in a row is ejected — no
 * calls — for `baseEjectionMs × times ejected`, at most `maxEjectionMs`. Then it is on probation:
 * one call at a time; an answer readmits it, another failure ejects it again, for longer. At most
 * `maxEjectionPercent` of the providers are ejected at once, and never the last one.
 */
export interface OutlierSettings {
  readonly consecutiveFailures: number;
  readonly baseEjectionMs: number;
  readonly maxEjectionMs: number;
  readonly maxEjectionPercent: number;
}

/** The options as `createClient` takes them; `false` turns outlier detection off. */
export type OutlierDetectionOptions = false | Partial<OutlierSettings>;

export const OUTLIER_DEFAULTS: OutlierSettings = Object.freeze({
  consecutiveFailures: 5,
  baseEjectionMs: 5000,
  maxEjectionMs: 60_000,
  maxEjectionPercent: 50,
});

/** Each setting's rule (the one option checker's), by name. */
const RULES: Readonly<Record<keyof OutlierSettings, Rule>> = {
  consecutiveFailures: count(1, MAX_TIMER_MS),
  baseEjectionMs: {
    must: `a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`,
    ok: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= MAX_TIMER_MS,
  },
  maxEjectionMs: {
    must: `a whole number of milliseconds from 1 to ${MAX_TIMER_MS}`,
    ok: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= MAX_TIMER_MS,
  },
  maxEjectionPercent: amount("percent", 0, 100),
};

function setting(o: Partial<OutlierSettings> | undefined, name: keyof OutlierSettings): number {
  return checked("createClient", `outlierDetection.${name}`, o?.[name], RULES[name], OUTLIER_DEFAULTS[name]);
}

/** The checked settings, or undefined when outlier detection is off. */
export function outlierSettings(o: OutlierDetectionOptions | undefined): OutlierSettings | undefined {
  if (o === false) return undefined;
  if (o !== undefined && (typeof o !== "object" || o === null || Array.isArray(o))) {
    throw new TypeError("createClient: outlierDetection must be false or { consecutiveFailures, baseEjectionMs, maxEjectionMs, maxEjectionPercent }");
  }
  const given = checkGroup("createClient", "outlierDetection", o, Object.keys(OUTLIER_DEFAULTS));
  const base = setting(given, "baseEjectionMs");
  return {
    consecutiveFailures: setting(given, "consecutiveFailures"),
    baseEjectionMs: base,
    maxEjectionMs: Math.max(base, setting(given, "maxEjectionMs")),
    maxEjectionPercent: setting(given, "maxEjectionPercent"),
  };
}

/**
 * Counts a timed-out or broken call against `provider` (one of `all`); ejects it when that makes
 * `consecutiveFailures` in a row, or at once when it was on probation, within the cap.
 */
export function countFailure(provider: Provider, all: readonly Provider[], s: OutlierSettings, logger: Logger | undefined): void {
  const now = provider.clock.now();
  const n = ++provider.consecutiveFailures;
  if (provider.ejectedUntil > now) return; // already out
  const probation = provider.ejectedUntil !== 0;
  if (!probation && n < s.consecutiveFailures) return;
  if (!withinCap(provider, all, s, now)) return;
  const ms = provider.eject(s.baseEjectionMs, s.maxEjectionMs, now);
  logger?.warn(
    { provider: provider.address, ejectedMs: ms, consecutiveFailures: n },
    `provider ${provider.address} ejected for ${ms} ms after ${n} calls in a row timed out or broke`,
  );
}

/** True when ejecting `provider` keeps the ejected share within the cap and one provider in. */
function withinCap(provider: Provider, all: readonly Provider[], s: OutlierSettings, now: number): boolean {
  let ejected = 1;
  let known = false;
  for (const p of all) {
    if (p === provider) known = true;
    else if (p.ejectedUntil > now) ejected++;
  }
  if (!known || ejected >= all.length) return false;
  return ejected * 100 <= s.maxEjectionPercent * all.length;
}
