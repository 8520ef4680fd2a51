/**
 * Dubbo's migration rules (`<app>.migration`): the step, `threshold`, `proportion`, `delay` and
 * `force`, at the top and per interface or provider application, resolved field by field as
 * Java's `MigrationRule.getValue` does. Pure: the consumer's directory applies the plan.
 */
import { asBool, asRecord, asText, parseRuleYaml } from "./config-yaml.js";

/** The config-center group of migration rules (`/dubbo/config/DUBBO_SERVICEDISCOVERY_MIGRATION/<app>.migration`). */
export const MIGRATION_GROUP = "DUBBO_SERVICEDISCOVERY_MIGRATION";

/** The `registry.level` each Dubbo step switches a consumer to (APPLICATION_FIRST: Java's own choice). */
type MigrationMode = "interface" | "application" | "application-first";

const STEPS: Readonly<Record<string, MigrationMode>> = {
  FORCE_INTERFACE: "interface",
  FORCE_APPLICATION: "application",
  APPLICATION_FIRST: "application-first",
};

/** The longest `delay` a rule may ask for, s (Java sleeps that long before comparing). */
const MAX_DELAY_S = 600;

/** One level of a rule: every field optional (an unset field falls back to the next level). */
interface MigrationFields {
  readonly step?: MigrationMode;
  readonly threshold?: number;
  readonly proportion?: number;
  readonly delay?: number;
  readonly force?: boolean;
}

/** A parsed `<app>.migration` rule: the top level, per-interface and per-application overrides. */
export interface MigrationRule extends MigrationFields {
  /** By Java's display key: `interface` or `interface:version` (no group). */
  readonly interfaces: ReadonlyMap<string, MigrationFields>;
  /** By provider application. */
  readonly applications: ReadonlyMap<string, MigrationFields>;
}

/** What a rule asks of one service. */
export interface MigrationPlan {
  readonly mode: MigrationMode;
  /** Instance-level addresses ÷ interface-level addresses needed to use the application level (default 0). */
  readonly threshold: number;
  /** APPLICATION_FIRST: the % of calls that may use the application level (the rest: interface level); default 100. */
  readonly proportion: number;
  /** FORCE_*: seconds to wait for the new level's addresses before comparing; default 0. */
  readonly delay: number;
  /** FORCE_*: switch without comparing the address counts; default false. */
  readonly force: boolean;
}

function stepOf(x: unknown, where: string): MigrationMode | undefined {
  const t = asText(x);
  if (t === undefined) return undefined;
  const step = STEPS[t.trim().toUpperCase()];
  if (!step) throw new Error(`${where}step must be FORCE_INTERFACE, APPLICATION_FIRST or FORCE_APPLICATION, got ${JSON.stringify(t)}`);
  return step;
}

/** A number field within bounds, or undefined when absent; throws naming the field otherwise. */
function numberOf(x: unknown, name: string, min: number, max: number, integer: boolean): number | undefined {
  const t = asText(x);
  if (t === undefined) return undefined;
  const n = Number(t);
  if (t.trim() === "" || !Number.isFinite(n) || n < min || n > max || (integer && !Number.isInteger(n))) {
    throw new Error(`${name} must be ${integer ? "a whole number" : "a number"} from ${min} to ${max}, got ${JSON.stringify(t)}`);
  }
  return n;
}

function fieldsOf(r: Record<string, unknown>, where: string): MigrationFields {
  return {
    step: stepOf(r.step, where),
    threshold: numberOf(r.threshold, `${where}threshold`, 0, 1e6, false),
    proportion: numberOf(r.proportion, `${where}proportion`, 0, 100, true),
    delay: numberOf(r.delay, `${where}delay`, 0, MAX_DELAY_S, true),
    force: r.force === undefined || r.force === null ? undefined : asBool(r.force, false),
  };
}

function subRules(x: unknown, name: string): Map<string, MigrationFields> {
  const out = new Map<string, MigrationFields>();
  if (!Array.isArray(x)) return out;
  for (const [i, raw] of x.entries()) {
    const r = asRecord(raw);
    const key = asText(r?.serviceKey);
    if (r && key) out.set(key, fieldsOf(r, `${name}[${i}].`));
  }
  return out;
}

/** Parses Dubbo's migration rule YAML. Throws with what is wrong. */
export function parseMigration(text: string): MigrationRule {
  const doc = asRecord(parseRuleYaml(text));
  if (!doc) throw new Error("a migration rule is a mapping with key and step");
  return { ...fieldsOf(doc, ""), interfaces: subRules(doc.interfaces, "interfaces"), applications: subRules(doc.applications, "applications") };
}

/**
 * The plan a rule sets for one service, each field as Java resolves it: the `interfaces` entry of
 * its display key (`interface[:version]`), else the `applications` entry of one of its provider
 * applications, else the top level, else the default. Undefined when the rule names no step for it.
 */
export function migrationPlan(rule: MigrationRule, displayKey: string, providerApps: readonly string[]): MigrationPlan | undefined {
  const levels: MigrationFields[] = [];
  const own = rule.interfaces.get(displayKey);
  if (own) levels.push(own);
  for (const app of providerApps) {
    const a = rule.applications.get(app);
    if (a) levels.push(a);
  }
  levels.push(rule);
  const pick = <K extends keyof MigrationFields>(k: K): MigrationFields[K] => levels.find((l) => l[k] !== undefined)?.[k];
  const mode = pick("step");
  if (mode === undefined) return undefined;
  return { mode, threshold: pick("threshold") ?? 0, proportion: pick("proportion") ?? 100, delay: pick("delay") ?? 0, force: pick("force") ?? false };
}

/**
 * Java's `DefaultMigrationAddressComparator.shouldMigrate`: move to the new level when it has
 * addresses and the old one has none, or when new ÷ old reaches the threshold; never when the
 * new level has none.
 */
export function shouldMigrate(newCount: number, oldCount: number, threshold: number): boolean {
  if (newCount === 0) return false;
  if (oldCount === 0) return true;
  return newCount / oldCount >= threshold;
}
