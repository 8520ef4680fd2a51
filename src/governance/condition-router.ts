// Owns `ConditionRouter`. What a route step gets besides the list: the call, the consumer, and
// where to write why (explain only). Must not change: Dubbo 3.3's rule semantics (the oracle tests
// compare with Dubbo Java).
import type { DubboUrl } from "../registry/url.js";
import { type ConditionLine, type Expression, expressionMatches, type MatchInput, parseConditionLine, parseExpression } from "./condition.js";
import { compareIgnoreCase, isBlank, javaParseInt, javaString } from "./java-text.js";
import { loadRuleMap, parseRuleBase, RULE_LIMITS, RuleError } from "./rule-yaml.js";
import type { RouteCall, RouteTarget } from "./types.js";
import { urlSample } from "./url-sample.js";

/**
 * One condition-rule key's router, as Java's `ListenableStateRouter` keeps it: the rule's kind
 * (v3.0 lines or v3.1 multi-destination conditions) and the routers built from it. Java quirks
 * kept on purpose: a rule that parses but whose conditions do not build changes the kind and
 * keeps the previous routers; a version above v3.1 is ignored and leaves the previous v3.0 lines.
 */

/** Results of one router per input list (the same array object while the provider list is unchanged). */
type ListCache = WeakMap<readonly RouteTarget[], unknown>;

interface V30Line {
  readonly line: ConditionLine | undefined; // undefined: the rule is disabled (Java does not parse it)
  readonly force: boolean;
  readonly cache: ListCache;
}

interface SubSet {
  readonly then: Expression;
  readonly weight: number;
  readonly text: string;
}

interface V31Line {
  readonly enabled: boolean;
  readonly force: boolean;
  readonly when: Expression;
  readonly whenText: string;
  readonly to: readonly SubSet[];
  readonly cache: ListCache;
}

interface Destinations {
  readonly sets: readonly (readonly RouteTarget[])[];
  readonly weights: readonly number[];
  readonly total: number;
}

/** What a route step gets besides the list: the call, the consumer, and where to write why (explain only). */
export interface StepContext {
  readonly call: RouteCall;
  readonly consumer: DubboUrl;
  /** The when side's input: the consumer URL's sample and the call. */
  readonly whenInput: MatchInput;
  readonly why?: string[];
}

function conditionsOf(map: Record<string, unknown>): unknown[] | undefined {
  const c = map.conditions;
  if (!Array.isArray(c)) return undefined;
  if (c.length > RULE_LIMITS.maxEntries) {
    throw new RuleError(`${c.length} conditions, over the limit of ${RULE_LIMITS.maxEntries}`);
  }
  return c;
}

/** A v3.1 map value as Java's JSON conversion into `Map<String, String>` gives it. */
function textOf(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === "object" ? JSON.stringify(v) : javaString(v);
}

/**
 * A v3.1 condition as Java's JSON conversion into `MultiDestCondition` reads it (at parse time:
 * a failure here leaves the previous rule whole): a map whose `from` is a map and `to` a list of
 * maps, each absent one defaulting to empty; an explicit null stays null (and fails later).
 */
function convertV31(c: unknown): { from: Record<string, unknown> | null; to: Record<string, unknown>[] | null } {
  const isMap = (v: unknown) => v !== null && typeof v === "object" && !Array.isArray(v);
  if (!isMap(c)) throw new RuleError(`a v3.1 condition must be a map (from, to), got ${JSON.stringify(c)}`);
  const cond = c as Record<string, unknown>;
  if (cond.from !== undefined && cond.from !== null && !isMap(cond.from)) throw new RuleError(`"from" must be a map, got ${JSON.stringify(cond.from)}`);
  if (cond.to !== undefined && cond.to !== null && !(Array.isArray(cond.to) && cond.to.every((t) => t === null || isMap(t)))) {
    throw new RuleError(`"to" must be a list of maps, got ${JSON.stringify(cond.to)}`);
  }
  return {
    from: cond.from === undefined ? {} : (cond.from as Record<string, unknown> | null),
    to: cond.to === undefined ? [] : (cond.to as Record<string, unknown>[] | null),
  };
}

/** `new MultiDestConditionRouter(…)`: parses the expressions and weights (a failure here keeps the previous routers). */
function buildV31(c: ReturnType<typeof convertV31>, force: boolean, enabled: boolean): V31Line {
  const { from, to } = c;
  if (from === null || to === null) throw new RuleError("Illegal route rule! (from and to must not be null)");
  const whenText = textOf(from.match);
  const when = isBlank(whenText) || whenText === "true" ? [] : parseExpression(whenText as string);
  const subsets = to.map((t): SubSet => {
    const m = t ?? {};
    const text = textOf(m.match);
    const then = isBlank(text) || text === "false" ? [] : parseExpression(text as string);
    let weight: number;
    try {
      weight = javaParseInt(textOf(m.weight) ?? "100");
    } catch {
      throw new RuleError(`weight must be an integer, got ${JSON.stringify(m.weight)}`);
    }
    return { then, weight: weight <= 0 ? 100 : weight, text: text ?? "" };
  });
  return { enabled, force, when, whenText: whenText ?? "", to: subsets, cache: new WeakMap() };
}

export class ConditionRouter {
  /** The kind of the last rule that parsed (Java's `routerRule`): v3.1 routes with the v3.1 list, anything else with the v3.0 lines. */
  private kind: "v3.0" | "v3.1" | undefined;
  private v30: readonly V30Line[] = [];
  private v31: readonly V31Line[] = [];

  /** No routers: routing passes the list through. */
  get empty(): boolean {
    return this.v30.length === 0 && this.v31.length === 0;
  }

  /** Deletes the rule: no routers. */
  clear(): void {
    this.kind = undefined;
    this.v30 = [];
    this.v31 = [];
  }

  /**
   * A rule's text arrives (Java's `process`). Throws RuleError when it does not parse or build
   * (the previous routers stay); returns a warning when Java ignores it without an error.
   */
  process(text: string): string | undefined {
    const map = loadRuleMap(text);
    const base = parseRuleBase(map);
    const version = base.configVersion;
    if (version?.toLowerCase().startsWith("v3.1")) {
      if (!Array.isArray(map.conditions)) throw new RuleError(`a v3.1 rule needs a list of conditions, got ${JSON.stringify(map.conditions ?? null)}`);
      const conditions = (conditionsOf(map) as unknown[]).map(convertV31);
      this.kind = "v3.1";
      if (conditions.length === 0 || !base.valid) return "the rule has no conditions (or valid: false): the previous routers stay";
      this.v31 = conditions.map((c) => buildV31(c, base.force, base.enabled));
      return undefined;
    }
    if (version !== undefined && compareIgnoreCase(version, "v3.1") > 0) {
      this.kind = undefined;
      return `configVersion ${version} is above v3.1: ignored, as Java ignores it`;
    }
    const conditions = conditionsOf(map);
    this.kind = "v3.0";
    if (conditions === undefined || conditions.length === 0 || !base.valid) return "the rule has no conditions (or valid: false): the previous routers stay";
    this.v30 = conditions.map((c) => ({
      line: base.enabled ? parseConditionLine(javaString(c)) : undefined,
      force: base.force,
      cache: new WeakMap(),
    }));
    return undefined;
  }

  route<T extends RouteTarget>(list: readonly T[], ctx: StepContext): readonly T[] {
    if (list.length === 0 || this.empty) {
      ctx.why?.push("no rule applies (no routers, or no providers)");
      return list;
    }
    let out = list;
    if (this.kind === "v3.1") for (const l of this.v31) out = routeV31(l, out, ctx);
    else for (const l of this.v30) out = routeV30(l, out, ctx);
    return out;
  }
}

function whenMatches(when: Expression, ctx: StepContext): boolean {
  return when.length === 0 || expressionMatches(when, ctx.whenInput, true);
}

/** The providers an expression keeps (the same array when it keeps them all). */
function filterThen<T extends RouteTarget>(list: readonly T[], then: Expression, consumer: DubboUrl, emptyKeepsNone: boolean): readonly T[] {
  if (then.length === 0) return emptyKeepsNone ? [] : list;
  const out = list.filter((p) => expressionMatches(then, { sample: urlSample(p.url), consumer }, false));
  return out.length === list.length ? list : out;
}

/** `ConditionStateRouter.doRoute`. */
function routeV30<T extends RouteTarget>(l: V30Line, list: readonly T[], ctx: StepContext): readonly T[] {
  const { line } = l;
  const why = ctx.why;
  if (line === undefined) {
    why?.push("rule disabled (enabled: false): all kept");
    return list;
  }
  if (list.length === 0) return list;
  if (!whenMatches(line.when, ctx)) {
    why?.push(`"${line.text}": the call does not match the when part: all kept`);
    return list;
  }
  if (line.then === null) {
    why?.push(`"${line.text}": blocklist (no then part): none kept`);
    return [];
  }
  let kept = l.cache.get(list) as readonly T[] | undefined;
  if (kept === undefined) {
    kept = filterThen(list, line.then, ctx.consumer, true);
    l.cache.set(list, kept);
  }
  if (kept.length > 0) {
    why?.push(`"${line.text}": matched, ${kept.length} of ${list.length} providers match the then part`);
    return kept;
  }
  if (l.force) {
    why?.push(`"${line.text}": matched, no provider matches the then part and force is true: none kept`);
    return kept;
  }
  why?.push(`"${line.text}": matched, no provider matches the then part and force is false: all kept`);
  return list;
}

function destinationsOf<T extends RouteTarget>(l: V31Line, list: readonly T[], consumer: DubboUrl): Destinations {
  let d = l.cache.get(list) as Destinations | undefined;
  if (d === undefined) {
    const sets: (readonly T[])[] = [];
    const weights: number[] = [];
    for (const s of l.to) {
      const res = filterThen(list, s.then, consumer, false);
      if (res.length > 0) {
        sets.push(res);
        weights.push(s.weight);
      }
    }
    d = { sets, weights, total: weights.reduce((a, b) => a + b, 0) };
    l.cache.set(list, d);
  }
  return d;
}

/** `DestinationSet.randDestination`: r in [0, total), the first set whose running weight reaches r. */
function draw(d: Destinations): readonly RouteTarget[] {
  if (d.sets.length === 1) return d.sets[0];
  let r = Math.floor(Math.random() * d.total);
  for (let i = 0; i < d.sets.length; i++) {
    r -= d.weights[i];
    if (r <= 0) return d.sets[i];
  }
  return [];
}

/** `MultiDestConditionRouter.doRoute`. */
function routeV31<T extends RouteTarget>(l: V31Line, list: readonly T[], ctx: StepContext): readonly T[] {
  const why = ctx.why;
  const label = `from "${l.whenText}"`;
  if (!l.enabled) {
    why?.push("rule disabled (enabled: false): all kept");
    return list;
  }
  if (list.length === 0) return list;
  if (!whenMatches(l.when, ctx)) {
    why?.push(`${label}: the call does not match: all kept`);
    return list;
  }
  if (l.to.length === 0) {
    why?.push(`${label}: traffic disabled (no destinations): none kept`);
    return [];
  }
  const d = destinationsOf(l, list, ctx.consumer);
  if (d.sets.length > 0) {
    const chosen = draw(d) as readonly T[];
    why?.push(`${label}: ${d.sets.length} non-empty destinations (weights ${d.weights.join(", ")}), drew one of ${chosen.length} providers`);
    return chosen;
  }
  if (l.force) {
    why?.push(`${label}: no destination has a provider and force is true: none kept`);
    return [];
  }
  why?.push(`${label}: no destination has a provider and force is false: all kept`);
  return list;
}
