// Owns `AffinityRouter`. Dubbo 3.3.6's service affinity router (`AffinityStateRouter`, rule
// `<interface>:<version>:<group>.affinity-router`, `configVersion: v3.1`, `affinityAware: {key, …
// Must not change: Dubbo 3.3's rule semantics (the oracle tests compare with Dubbo Java).
import type { StepContext } from "./condition-router.js";
import { compileMatcher, expressionMatches, matcherFor } from "./condition.js";
import { isBlank } from "./java-text.js";
import { loadRuleMap, parseRuleBase, RuleError } from "./rule-yaml.js";
import type { RouteTarget } from "./types.js";
import { urlSample } from "./url-sample.js";

/**
 * Dubbo 3.3.6's service affinity router (`AffinityStateRouter`, rule
 * `<interface>:<version>:<group>.affinity-router`, `configVersion: v3.1`,
 * `affinityAware: {key, ratio}`): keep the providers whose `key` parameter matches the
 * consumer's value of it, if they are at least `ratio` % of the list; else keep all. The
 * consumer's value is read as a then-side pattern, as Java does (`*`, ranges and `$param` work).
 */

interface AffinityRule {
  readonly enabled: boolean;
  readonly key: string;
  readonly ratio: number;
}

export class AffinityRouter {
  private rule: AffinityRule | undefined;
  private cache = new WeakMap<readonly RouteTarget[], readonly RouteTarget[]>();

  get hasRule(): boolean {
    return this.rule !== undefined;
  }

  /** A rule arrives (`AffinityListenableStateRouter.process`): throws RuleError when it cannot be used. */
  process(text: string): string | undefined {
    const map = loadRuleMap(text);
    const base = parseRuleBase(map);
    const aware = map.affinityAware;
    if (aware === null || typeof aware !== "object" || Array.isArray(aware)) throw new RuleError("affinityAware must be a map (key, ratio)");
    const a = aware as Record<string, unknown>;
    if (a.key !== undefined && a.key !== null && typeof a.key !== "string")
      throw new RuleError(`affinityAware.key must be a string, got ${JSON.stringify(a.key)}`);
    const key = (a.key ?? undefined) as string | undefined;
    const ratio = a.ratio === undefined || a.ratio === null ? 0 : Number(String(a.ratio).trim() === "" ? Number.NaN : a.ratio);
    if (Number.isNaN(ratio)) throw new RuleError(`ratio must be a number, got ${JSON.stringify(a.ratio)}`);
    if (base.configVersion === undefined) throw new RuleError("configVersion is missing (Java fails on it)");
    if (isBlank(key) || !base.configVersion.startsWith("v3.1") || ratio > 100 || ratio < 0 || !base.valid) {
      return "the rule is not valid (needs configVersion v3.1, affinityAware.key, ratio in 0..100): the previous rule stays";
    }
    this.rule = { enabled: base.enabled, key: key as string, ratio };
    this.cache = new WeakMap();
    return undefined;
  }

  clear(): void {
    this.rule = undefined;
    this.cache = new WeakMap();
  }

  route<T extends RouteTarget>(list: readonly T[], ctx: StepContext): readonly T[] {
    const rule = this.rule;
    if (rule === undefined || !rule.enabled || list.length === 0) {
      ctx.why?.push(rule === undefined ? "no rule" : "rule disabled or no providers: all kept");
      return list;
    }
    let kept = this.cache.get(list) as readonly T[] | undefined;
    if (kept === undefined) {
      kept = affinityOf(rule, list, ctx);
      this.cache.set(list, kept);
    }
    ctx.why?.push(
      `affinity on ${rule.key}=${ctx.consumer.params[rule.key] ?? "(the consumer has none)"}, ratio ${rule.ratio} %: ${kept === list ? "all kept" : `${kept.length} of ${list.length} kept`}`,
    );
    return kept;
  }
}

function affinityOf<T extends RouteTarget>(rule: AffinityRule, list: readonly T[], ctx: StepContext): readonly T[] {
  const own = ctx.consumer.params[rule.key];
  if (own === undefined && list.some((p) => urlSample(p.url).has(rule.key))) {
    return list; // Java: a null pattern throws on the first provider that has the key; the router keeps all
  }
  const matcher = { ...matcherFor(rule.key), kind: "param" as const };
  if (own !== undefined) matcher.matches.push(own);
  const expr = [compileMatcher(matcher)];
  const result = own === undefined ? [] : list.filter((p) => expressionMatches(expr, { sample: urlSample(p.url), consumer: ctx.consumer }, false));
  return result.length / list.length >= rule.ratio / 100 ? (result.length === list.length ? list : result) : list;
}
