/** Bounded YAML reading for configurators and migration rules (the routing rules have their own, in rule-yaml.ts). */
import { RULE_LIMITS } from "./rule-yaml.js";
import { yamlModule } from "./yaml-module.js";

/**
 * The largest rule read from the config center, bytes: the routing rules' bound (128 KiB). A
 * real rule is a few KiB (1,000 conditions, the most a rule may have, are ~35 KiB). A bigger one
 * is refused whole before any parse (the previous rule stays): YAML parses at a few hundred KiB
 * a second, so a rule near ZooKeeper's 1 MiB node limit would hold the event loop for seconds.
 */
export const MAX_RULE_BYTES = RULE_LIMITS.maxTextLength;

/** The most aliases a rule may use (SnakeYAML's 50): a YAML bomb (aliases of aliases) is refused before it expands. */
const MAX_ALIASES = RULE_LIMITS.maxAliases;

/**
 * Parses a rule's YAML (JSON is YAML too) into plain values, bounded: past
 * {@link MAX_RULE_BYTES} or {@link MAX_ALIASES} aliases it throws, naming the bound.
 */
export function parseRuleYaml(text: string): unknown {
  if (text.length > MAX_RULE_BYTES) throw new Error(`the rule is ${text.length} characters, more than the ${MAX_RULE_BYTES} a rule may have`);
  try {
    // YAML 1.1, as SnakeYAML reads Dubbo's rules in Java (`yes`/`on` are booleans).
    return yamlModule().parse(text, { version: "1.1", maxAliasCount: MAX_ALIASES, prettyErrors: false, uniqueKeys: false });
  } catch (e) {
    const msg = (e as Error).message.split("\n")[0];
    throw new Error(/alias/i.test(msg) ? `more than ${MAX_ALIASES} YAML aliases (a YAML bomb?)` : `not YAML: ${msg}`);
  }
}

/** A YAML mapping as a record, or undefined. */
export function asRecord(x: unknown): Record<string, unknown> | undefined {
  return typeof x === "object" && x !== null && !Array.isArray(x) ? (x as Record<string, unknown>) : undefined;
}

/** A scalar as Java's YAML binding reads it into a String field; undefined for none. */
export function asText(x: unknown): string | undefined {
  if (x === undefined || x === null) return undefined;
  if (typeof x === "string") return x;
  if (typeof x === "number" || typeof x === "boolean" || typeof x === "bigint") return String(x);
  return undefined;
}

/** A list of scalars (a single scalar counts as a list of one). */
export function asTextList(x: unknown): string[] {
  if (x === undefined || x === null) return [];
  const list = Array.isArray(x) ? x : [x];
  return list.map(asText).filter((s): s is string => s !== undefined);
}

/** A boolean field, Dubbo's way: `true`/`false` (any case) or a YAML boolean; `fallback` otherwise. */
export function asBool(x: unknown, fallback: boolean): boolean {
  if (typeof x === "boolean") return x;
  if (typeof x === "string" && /^(true|false)$/i.test(x)) return x.toLowerCase() === "true";
  return fallback;
}
