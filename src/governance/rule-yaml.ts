// Owns `RULE_LIMITS`, `RuleError`, `loadRuleMap`, `stringField`, … Bounds on a rule read from the
// config center, checked before and while parsing, so a rule written by mistake or by an attacker
// costs bounded time and memory. Must not change: Dubbo 3.3's rule semantics (the oracle tests
// compare with Dubbo Java).
import { yamlModule } from "./yaml-module.js";
import { javaBoolean, javaParseInt } from "./java-text.js";

/**
 * Bounds on a rule read from the config center, checked before and while parsing, so a rule
 * written by mistake or by an attacker costs bounded time and memory; a rule beyond them is
 * refused like a rule that does not parse (the previous one stays).
 */
export const RULE_LIMITS = {
  /**
   * Characters of YAML text. Parsing runs on the event loop at a few hundred KB/s on a loaded
   * machine: 64 KiB blocks it for at most a few hundred ms. Dubbo Admin caps rules at 64 KiB;
   * 1,000 conditions take about 35 KiB.
   */
  maxTextLength: 64 * 1024,
  /** Aliases (`*name`) in one rule: YAML bombs expand aliases of aliases; SnakeYAML allows 50. */
  maxAliases: 50,
  /** Conditions of a condition rule, tags of a tag rule. */
  maxEntries: 1000,
  /** Addresses of one tag, and `match` entries of one tag. */
  maxListLength: 10_000,
  /** Characters of one condition, one regex of a tag's `match`. */
  maxExpressionLength: 4096,
} as const;

/** A rule that cannot be used: the message names the problem. */
export class RuleError extends Error {
  override readonly name = "RuleError";
}

/**
 * The YAML of a rule as a map, read as SnakeYAML reads it in Java (YAML 1.1 scalars: `yes`/`on`
 * are booleans; duplicate keys allowed, the last wins). Throws RuleError when the text is too long,
 * does not parse, uses too many aliases or is not a map.
 */
export function loadRuleMap(text: string): Record<string, unknown> {
  const seen = recent.get(text);
  if (seen !== undefined) {
    recent.delete(text);
    recent.set(text, seen);
    if (seen instanceof RuleError) throw seen;
    return seen;
  }
  let result: Record<string, unknown> | RuleError;
  try {
    result = parseRuleMap(text);
  } catch (e) {
    result = e instanceof RuleError ? e : new RuleError(String(e));
  }
  recent.set(text, result);
  if (recent.size > RECENT) recent.delete(recent.keys().next().value as string);
  if (result instanceof RuleError) throw result;
  return result;
}

/**
 * The last texts parsed and their outcome (a map, never modified by its readers, or the error):
 * a rule flapping between a few texts costs one parse per distinct text.
 */
const recent = new Map<string, Record<string, unknown> | RuleError>();
const RECENT = 8;

function parseRuleMap(text: string): Record<string, unknown> {
  if (text.length > RULE_LIMITS.maxTextLength) {
    throw new RuleError(`the rule is ${text.length} characters, over the limit of ${RULE_LIMITS.maxTextLength}`);
  }
  const doc = yamlModule().parseDocument(text, { version: "1.1", uniqueKeys: false, prettyErrors: false });
  if (doc.errors.length > 0) throw new RuleError(`the YAML does not parse: ${doc.errors[0].message.split("\n")[0]}`);
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: RULE_LIMITS.maxAliases });
  } catch (e) {
    throw new RuleError(`the YAML is refused: ${(e as Error).message.split("\n")[0]}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value) || value instanceof Map) {
    throw new RuleError(`the rule is not a YAML map (got ${value === null ? "an empty document" : Array.isArray(value) ? "a list" : typeof value})`);
  }
  return value as Record<string, unknown>;
}

/** The fields every Dubbo rule shares (`AbstractRouterRule.parseFromMap0`), with Java's defaults. */
export interface RuleBase {
  readonly configVersion: string | undefined;
  readonly runtime: boolean;
  readonly force: boolean;
  readonly valid: boolean;
  readonly enabled: boolean;
  readonly priority: number;
  readonly scope: string | undefined;
  readonly key: string | undefined;
}

/** A field Java casts to String: absent → undefined, a string → itself, anything else throws (ClassCastException). */
export function stringField(map: Record<string, unknown>, name: string): string | undefined {
  const v = map[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "string") throw new RuleError(`"${name}" must be a string, got ${JSON.stringify(v)}`);
  return v;
}

function boolField(map: Record<string, unknown>, name: string, dflt: boolean): boolean {
  const v = map[name];
  return v === undefined || v === null ? dflt : javaBoolean(v);
}

/** `AbstractRouterRule.parseFromMap0`: booleans by `Boolean.parseBoolean`, priority by `Integer.parseInt`. */
export function parseRuleBase(map: Record<string, unknown>): RuleBase {
  const p = map.priority;
  let priority = 0;
  if (p !== undefined && p !== null) {
    try {
      priority = javaParseInt(String(p));
    } catch {
      throw new RuleError(`"priority" must be an integer, got ${JSON.stringify(p)}`);
    }
  }
  stringField(map, "rawRule");
  return {
    configVersion: stringField(map, "configVersion"),
    runtime: boolField(map, "runtime", true),
    force: boolField(map, "force", false),
    valid: boolField(map, "valid", true),
    enabled: boolField(map, "enabled", true),
    priority,
    scope: stringField(map, "scope"),
    key: stringField(map, "key"),
  };
}
