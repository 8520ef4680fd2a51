import type { Logger } from "../../runtime/logger.js";
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

function setting(name: keyof OutlierSettings, v: unknown, min: number, max: number): number {
  if (v === undefined) return OUTLIER_DEFAULTS[name];
  if (typeof v !== "number" || !Number.isFinite(v) || v < min || v > max) {
    throw new TypeError(`createClient: outlierDetection.${name} must be a number from ${min} to ${max}, got ${String(v)}`);
  }
  return v;
}

/** The checked settings, or undefined when outlier detection is off. */
export function outlierSettings(o: OutlierDetectionOptions | undefined): OutlierSettings | undefined {
  if (o === false) return undefined;
  if (o !== undefined && (typeof o !== "object" || o === null)) {
    throw new TypeError("createClient: outlierDetection must be false or { consecutiveFailures, baseEjectionMs, maxEjectionMs, maxEjectionPercent }");
  }
  const base = setting("baseEjectionMs", o?.baseEjectionMs, 1, 2 ** 31);
  return {
    consecutiveFailures: Math.floor(setting("consecutiveFailures", o?.consecutiveFailures, 1, 2 ** 31)),
    baseEjectionMs: base,
    maxEjectionMs: Math.max(base, setting("maxEjectionMs", o?.maxEjectionMs, 1, 2 ** 31)),
    maxEjectionPercent: setting("maxEjectionPercent", o?.maxEjectionPercent, 0, 100),
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
