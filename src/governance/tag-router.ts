// Owns `TAG_KEY`, `FORCE_TAG_KEY`, `TagRouter`. Dubbo's tag router (`TagStateRouter`): static tags
// (a provider's `dubbo.tag` parameter) and the dynamic `<providerApp>.tag-router` rule (tags by
// addresses, or in v3.0 by … Must not change: Dubbo 3.3's rule semantics (the oracle tests compare
// with Dubbo Java).
import type { StepContext } from "./condition-router.js";
import { addressInSet } from "./ip-match.js";
import { javaString } from "./java-text.js";
import { loadRuleMap, parseRuleBase, RULE_LIMITS, type RuleBase, RuleError, stringField } from "./rule-yaml.js";
import type { RouteTarget } from "./types.js";
import { urlAddress } from "./url-sample.js";

/**
 * Dubbo's tag router (`TagStateRouter`): static tags (a provider's `dubbo.tag` parameter) and
 * the dynamic `<providerApp>.tag-router` rule (tags by addresses, or in v3.0 by provider
 * parameters), the call's `dubbo.tag` / `dubbo.force.tag`, and Java's fallbacks exactly.
 */

export const TAG_KEY = "dubbo.tag";
export const FORCE_TAG_KEY = "dubbo.force.tag";

/** `StringMatch`: the first field set decides (exact, prefix, regex, wildcard, empty, noempty). */
interface StringMatch {
  readonly exact?: string;
  readonly prefix?: string;
  readonly regex?: RegExp;
  readonly wildcard?: string;
  readonly empty?: string;
  readonly noempty?: string;
}

interface ParamMatch {
  readonly key: string | undefined;
  readonly value: StringMatch | undefined;
}

interface Tag {
  readonly name: string | undefined;
  readonly addresses: readonly string[] | undefined;
  readonly match: readonly ParamMatch[] | undefined;
}

interface TagRule {
  readonly base: RuleBase;
  readonly tags: readonly Tag[];
  readonly text: string;
}

/** A tag rule's groups for one provider list: tag name → addresses, and every address of any tag. */
interface TagGroups {
  readonly byName: ReadonlyMap<string | undefined, ReadonlySet<string>>;
  readonly all: ReadonlySet<string>;
}

/**
 * A quantified group holding a quantifier or an alternation (`(a+)+`, `(a|aa)*`), or a
 * back-reference: the shapes that make a backtracking engine take exponential time. JavaScript
 * has no regex time limit, and a regex from the config center runs in the consumer.
 */
const NESTED_QUANTIFIER = /\([^()]*(?:[+*?|]|\{\d)[^()]*\)\s*(?:[+*]|\{\d)|\\[1-9]|\\k</;

function stringMatchOf(v: unknown): StringMatch | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== "object" || Array.isArray(v))
    throw new RuleError(`a tag's match value must be a map (exact, prefix, regex, wildcard, empty, noempty), got ${JSON.stringify(v)}`);
  const m = v as Record<string, unknown>;
  const s = (k: string) => (m[k] === undefined || m[k] === null ? undefined : javaString(m[k]));
  const regex = s("regex");
  if (regex !== undefined && regex.length > RULE_LIMITS.maxExpressionLength)
    throw new RuleError(`a regex of ${regex.length} characters, over the limit of ${RULE_LIMITS.maxExpressionLength}`);
  if (regex !== undefined && NESTED_QUANTIFIER.test(regex)) {
    throw new RuleError(
      `the regex ${JSON.stringify(regex)} has a quantified group that holds a quantifier or an alternation (or a back-reference): it can backtrack for ever, refused`,
    );
  }
  let re: RegExp | undefined;
  try {
    re = regex === undefined ? undefined : new RegExp(`^(?:${regex})$`);
  } catch (e) {
    throw new RuleError(`the regex ${JSON.stringify(regex)} does not compile: ${(e as Error).message}`);
  }
  return { exact: s("exact"), prefix: s("prefix"), regex: re, wildcard: s("wildcard"), empty: s("empty"), noempty: s("noempty") };
}

function stringMatches(m: StringMatch, input: string | undefined): boolean {
  if (m.exact !== undefined && input !== undefined) return input === m.exact;
  if (m.prefix !== undefined && input !== undefined) return input.startsWith(m.prefix);
  if (m.regex !== undefined && input !== undefined) return m.regex.test(input);
  if (m.wildcard !== undefined && input !== undefined) return input === m.wildcard || m.wildcard === "*";
  if (m.empty !== undefined) return input === undefined || input === "";
  if (m.noempty !== undefined) return input !== undefined && input.length > 0;
  return false;
}

function listOf(v: unknown, what: string): unknown[] {
  if (!Array.isArray(v)) throw new RuleError(`${what} must be a list, got ${JSON.stringify(v)}`);
  if (v.length > RULE_LIMITS.maxListLength) throw new RuleError(`${what} has ${v.length} entries, over the limit of ${RULE_LIMITS.maxListLength}`);
  return v;
}

function parseTag(v: unknown, version: string | undefined): Tag {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new RuleError(`a tag must be a map (name, addresses or match), got ${JSON.stringify(v)}`);
  const t = v as Record<string, unknown>;
  const name = stringField(t, "name");
  let match: ParamMatch[] | undefined;
  if (version?.startsWith("v3.0") && t.match !== undefined && t.match !== null) {
    match = listOf(t.match, `tag ${name}'s match`).map((m): ParamMatch => {
      if (m === null || typeof m !== "object") throw new RuleError(`tag ${name}: a match entry must be a map (key, value), got ${JSON.stringify(m)}`);
      const e = m as Record<string, unknown>;
      return { key: e.key === undefined || e.key === null ? undefined : javaString(e.key), value: stringMatchOf(e.value) };
    });
  }
  const addresses = Array.isArray(t.addresses) ? listOf(t.addresses, `tag ${name}'s addresses`).map(javaString) : undefined;
  const v30 = version?.startsWith("v3.0") === true;
  if (v30 && (addresses === undefined || addresses.length === 0) && match === undefined) {
    throw new RuleError(`tag ${name} has neither addresses nor match (Java fails on it with a NullPointerException)`);
  }
  return { name, addresses, match };
}

/** `TagRuleParser.parse`: throws RuleError when the rule cannot be used. */
function parseTagRule(text: string): TagRule {
  const map = loadRuleMap(text);
  const base = parseRuleBase(map);
  let tags: Tag[] = [];
  if (Array.isArray(map.tags)) {
    if (map.tags.length > RULE_LIMITS.maxEntries) throw new RuleError(`${map.tags.length} tags, over the limit of ${RULE_LIMITS.maxEntries}`);
    tags = map.tags.map((t) => parseTag(t, base.configVersion));
  }
  return { base: { ...base, valid: base.valid && tags.length > 0 }, tags, text };
}

/** `TagRouterRule.init`: the address tags, then (v3.0) the match tags resolved against the providers. */
function groupsOf(rule: TagRule, providers: readonly RouteTarget[]): TagGroups {
  const byName = new Map<string | undefined, ReadonlySet<string>>();
  for (const t of rule.tags) if (t.addresses && t.addresses.length > 0) byName.set(t.name, new Set(t.addresses));
  if (rule.base.configVersion?.startsWith("v3.0") && providers.length > 0) {
    for (const t of rule.tags) {
      if (t.addresses && t.addresses.length > 0) continue;
      const found = new Set<string>();
      for (const p of providers) {
        if ((t.match ?? []).every((m) => m.value !== undefined && stringMatches(m.value, m.key === undefined ? undefined : p.url.params[m.key])))
          found.add(urlAddress(p.url));
      }
      if (found.size > 0) byName.set(t.name, found);
    }
  }
  const all = new Set<string>();
  for (const s of byName.values()) for (const a of s) all.add(a);
  return { byName, all };
}

/** `selectAddressByTagLevel`: `a|b|c` tries `a|b|c`, `a|b`, `a` (unless the call forces its tag). */
function selectByTagLevel(byName: ReadonlyMap<string | undefined, ReadonlySet<string>>, tag: string, force: boolean): ReadonlySet<string> | undefined {
  if (force || !tag.includes("|")) return byName.get(tag);
  const parts = tag.split("|");
  for (let i = parts.length; i > 0; i--) {
    const found = byName.get(parts.slice(0, i).join("|"));
    if (found && found.size > 0) return found;
  }
  return undefined;
}

/** Java's `filterInvoker`: the same list when every provider passes. */
function keep<T extends RouteTarget>(list: readonly T[], test: (p: T) => boolean): readonly T[] {
  const out = list.filter(test);
  return out.length === list.length ? list : out;
}

const untagged = (p: RouteTarget): boolean => !p.url.params[TAG_KEY];

function inSet(set: ReadonlySet<string>, p: RouteTarget): boolean {
  return addressInSet(set, p.url.host, p.url.port);
}

/** Distinct (tag, force) results cached per provider list; beyond this, calls route uncached (tags come from callers). */
const MAX_CACHED_TAGS = 64;

export class TagRouter {
  private rule: TagRule | undefined;
  private groups = new WeakMap<readonly RouteTarget[], TagGroups>();
  private results = new WeakMap<readonly RouteTarget[], Map<string, readonly RouteTarget[]>>();

  get hasRule(): boolean {
    return this.rule !== undefined;
  }

  /** A rule arrives: throws RuleError when it cannot be used (the previous rule stays). */
  process(text: string): void {
    this.rule = parseTagRule(text);
    this.groups = new WeakMap();
    this.results = new WeakMap();
  }

  clear(): void {
    this.rule = undefined;
    this.groups = new WeakMap();
    this.results = new WeakMap();
  }

  route<T extends RouteTarget>(list: readonly T[], ctx: StepContext): readonly T[] {
    if (list.length === 0) return list;
    const att = ctx.call.attachments;
    const tag = att[TAG_KEY] || ctx.consumer.params[TAG_KEY] || "";
    const force = (att[FORCE_TAG_KEY] || ctx.consumer.params[FORCE_TAG_KEY] || "false").toLowerCase() === "true";
    if (ctx.why) return this.decide(list, tag, force, ctx.why);
    let perList = this.results.get(list);
    if (perList === undefined) {
      perList = new Map();
      this.results.set(list, perList);
    }
    const key = force ? `1${tag}` : `0${tag}`;
    let out = perList.get(key) as readonly T[] | undefined;
    if (out === undefined) {
      out = this.decide(list, tag, force, undefined);
      if (perList.size < MAX_CACHED_TAGS) perList.set(key, out);
    }
    return out;
  }

  private groupsFor(rule: TagRule, list: readonly RouteTarget[]): TagGroups {
    let g = this.groups.get(list);
    if (g === undefined) {
      g = groupsOf(rule, list);
      this.groups.set(list, g);
    }
    return g;
  }

  /** `TagStateRouter.doRoute`. */
  private decide<T extends RouteTarget>(list: readonly T[], tag: string, force: boolean, why: string[] | undefined): readonly T[] {
    const rule = this.rule;
    if (rule === undefined || !rule.base.valid || !rule.base.enabled) return staticTags(list, tag, force, why);
    const g = this.groupsFor(rule, list);
    if (tag === "") {
      let result: readonly T[] = list;
      if (g.all.size > 0) {
        result = keep(list, (p) => !inSet(g.all, p));
        if (result.length === 0) {
          why?.push("no tag on the call, and every provider is in a dynamic tag group: none kept");
          return result;
        }
      }
      why?.push("no tag on the call: the providers in no dynamic tag group and without a static tag");
      return keep(result, untagged);
    }
    return dynamicTag(list, tag, force, rule, g, why);
  }
}

function dynamicTag<T extends RouteTarget>(
  list: readonly T[],
  tag: string,
  force: boolean,
  rule: TagRule,
  g: TagGroups,
  why: string[] | undefined,
): readonly T[] {
  const addresses = selectByTagLevel(g.byName, tag, force);
  let result: readonly T[];
  if (addresses !== undefined) {
    result = keep(list, (p) => inSet(addresses, p));
    if (result.length > 0 || rule.base.force) {
      why?.push(
        `tag ${tag}: the rule's group for it (${[...addresses].join(", ")}): ${result.length} kept${result.length === 0 ? " (the rule has force: true)" : ""}`,
      );
      return result;
    }
  } else {
    result = keep(list, (p) => p.url.params[TAG_KEY] === tag);
  }
  if (result.length > 0 || force) {
    why?.push(
      `tag ${tag}: ${addresses === undefined ? "not in the rule; providers with the static tag" : "its group is empty"}: ${result.length} kept${result.length === 0 ? " (dubbo.force.tag is true)" : ""}`,
    );
    return result;
  }
  why?.push(
    `tag ${tag}: no provider${addresses === undefined ? " has the static tag" : " in its group"}; failover to providers in no dynamic tag group and without a static tag`,
  );
  return keep(
    keep(list, (p) => !inSet(g.all, p)),
    untagged,
  );
}

/** `filterUsingStaticTag`: no usable dynamic rule. */
function staticTags<T extends RouteTarget>(list: readonly T[], tag: string, force: boolean, why: string[] | undefined): readonly T[] {
  if (tag === "") {
    why?.push("no tag rule, no tag on the call: the providers without a static tag");
    return keep(list, untagged);
  }
  const result = keep(list, (p) => p.url.params[TAG_KEY] === tag);
  if (result.length > 0 || force) {
    why?.push(`no tag rule; tag ${tag}: the providers with static tag ${tag}${result.length === 0 ? ": none, and dubbo.force.tag is true" : ""}`);
    return result;
  }
  why?.push(`no tag rule; tag ${tag}: no provider has it, failover to the providers without a static tag`);
  return keep(list, untagged);
}
