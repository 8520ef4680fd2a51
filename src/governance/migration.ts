import { asRecord, asText, parseRuleYaml } from "./config-yaml.js";

/** The config-center group of migration rules (`/dubbo/config/DUBBO_SERVICEDISCOVERY_MIGRATION/<app>.migration`). */
export const MIGRATION_GROUP = "DUBBO_SERVICEDISCOVERY_MIGRATION";

/** Dubbo's migration steps, and the `registry.level` each switches a consumer to. */
const STEPS: Readonly<Record<string, "interface" | "application" | "both">> = {
  FORCE_INTERFACE: "interface",
  FORCE_APPLICATION: "application",
  APPLICATION_FIRST: "both",
};

/** A parsed `<app>.migration` rule: the step for every interface, and per-interface overrides. */
export interface MigrationRule {
  readonly step: "interface" | "application" | "both" | undefined;
  /** By `serviceKey` (`interface` or `interface:version`, `group/` first when grouped). */
  readonly interfaces: ReadonlyMap<string, "interface" | "application" | "both">;
  /** By provider application. */
  readonly applications: ReadonlyMap<string, "interface" | "application" | "both">;
}

function stepOf(x: unknown, where: string): "interface" | "application" | "both" | undefined {
  const t = asText(x);
  if (t === undefined) return undefined;
  const step = STEPS[t.trim().toUpperCase()];
  if (!step) throw new Error(`${where}step must be FORCE_INTERFACE, APPLICATION_FIRST or FORCE_APPLICATION, got ${JSON.stringify(t)}`);
  return step;
}

function subRules(x: unknown, name: string): Map<string, "interface" | "application" | "both"> {
  const out = new Map<string, "interface" | "application" | "both">();
  if (!Array.isArray(x)) return out;
  for (const [i, raw] of x.entries()) {
    const r = asRecord(raw);
    const key = asText(r?.serviceKey);
    const step = stepOf(r?.step, `${name}[${i}].`);
    if (key && step) out.set(key, step);
  }
  return out;
}

/** Parses Dubbo's migration rule YAML (`key`, `step`, `threshold`, `interfaces`, `applications`). Throws with what is wrong. */
export function parseMigration(text: string): MigrationRule {
  const doc = asRecord(parseRuleYaml(text));
  if (!doc) throw new Error("a migration rule is a mapping with key and step");
  return { step: stepOf(doc.step, ""), interfaces: subRules(doc.interfaces, "interfaces"), applications: subRules(doc.applications, "applications") };
}

/**
 * The discovery a rule sets for one service: its `interfaces` entry (by service key or plain
 * interface name), else the top-level step; undefined when the rule says nothing for it.
 */
export function migrationStep(rule: MigrationRule, serviceKey: string, iface: string): "interface" | "application" | "both" | undefined {
  return rule.interfaces.get(serviceKey) ?? rule.interfaces.get(iface) ?? rule.step;
}
