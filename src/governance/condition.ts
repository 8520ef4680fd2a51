// Owns `compileMatcher`, `matcherFor`, `parseExpression`, `parseConditionLine`, … Prepares a
// matcher's values for matching (after its values are all added). Must not change: Dubbo 3.3's rule
// semantics (the oracle tests compare with Dubbo Java).
import type { DubboUrl } from "../registry/url.js";
import { dubboParseInteger, isBlank, javaSplit, javaString, javaTrim } from "./java-text.js";
import { RULE_LIMITS, RuleError } from "./rule-yaml.js";
import { rawParameter } from "./url-sample.js";

/**
 * The grammar of a Dubbo condition (`ConditionStateRouter.parseRule`), and its matchers:
 * `key=value`, `key!=value`, comma lists, `&` between keys, `*` globs, `a~b` ranges, `$param`
 * references (then side), `method` (the invoked method on the when side), `arguments[N]` and
 * `attachments[name]`. Java's quirks are kept so a rule routes the same from both languages
 * (docs/governance.md lists them).
 */

/** Java's value for a key that names no argument or attachment: never equal to a pattern, so `!=` matches. */
const NOT_FOUND = "dubbo_internal_not_found_argument_condition_value";

export interface Matcher {
  readonly kind: "param" | "argument" | "attachment";
  readonly key: string;
  readonly matches: string[];
  readonly mismatches: string[];
  /** arguments[N]: N, or -1 when the key names no argument (Java's "not found"). */
  readonly argIndex: number;
  /** attachments[name]: the name, or undefined when the key names none. */
  readonly attachment: string | undefined;
  /** The values compiled by {@link compileMatcher} (`matches`, `mismatches` as patterns). */
  compiled?: { readonly matches: readonly Pattern[]; readonly mismatches: readonly Pattern[] };
}

/** A value prepared once: a range (`~` in the raw text), a `$param` reference, or a glob split at its last `*`. */
interface Pattern {
  readonly kind: "range" | "ref" | "glob";
  readonly text: string;
  /** The glob split at its last `*` (a `$param` read literally on the when side is a glob too). */
  readonly star: number;
  readonly prefix: string;
  readonly suffix: string;
}

function compilePattern(text: string): Pattern {
  const star = text.lastIndexOf("*");
  const kind = text.includes("~") ? "range" : text.startsWith("$") ? "ref" : "glob";
  return { kind, text, star, prefix: star < 0 ? text : text.slice(0, star), suffix: star < 0 ? "" : text.slice(star + 1) };
}

/** Prepares a matcher's values for matching (after its values are all added). */
export function compileMatcher(m: Matcher): Matcher {
  m.compiled = { matches: m.matches.map(compilePattern), mismatches: m.mismatches.map(compilePattern) };
  return m;
}

/** The parsed expression: its matchers (all must match), one per key. */
export type Expression = readonly Matcher[];

/** What `ArgumentConditionMatcher` and `AttachmentConditionMatcher` read from their key (the part before the first `.`). */
export function matcherFor(key: string): Matcher {
  const kind = key.startsWith("arguments") ? "argument" : key.startsWith("attachments") ? "attachment" : "param";
  const head = key.split(".")[0];
  const arg = kind === "argument" ? /arguments\[([0-9]+)\]/.exec(head) : null;
  const att = kind === "attachment" ? /attachments\[(.+)\]/.exec(head) : null;
  const argIndex = arg && Number(arg[1]) <= 2147483647 ? Number(arg[1]) : -1;
  return { kind, key, matches: [], mismatches: [], argIndex, attachment: att ? att[1] : undefined };
}

/** Java's `\s` is ASCII whitespace only. */
const ROUTE_PATTERN = /([&!=,]*)[ \t\n\v\f\r]*([^&!=, \t\n\v\f\r]+)/g;

/** `parseRule`: throws RuleError naming the character and index Java names. */
export function parseExpression(rule: string): Expression {
  const condition = new Map<string, Matcher>();
  if (isBlank(rule)) return [];
  let pair: Matcher | undefined;
  let values: string[] | undefined;
  for (const m of rule.matchAll(ROUTE_PATTERN)) {
    const [, sep, content] = m;
    if (sep === "" || sep === "&") {
      pair = sep === "&" ? (condition.get(content) ?? matcherFor(content)) : matcherFor(content);
      condition.set(content, pair);
    } else if ((sep === "=" || sep === "!=") && pair !== undefined) {
      values = sep === "=" ? pair.matches : pair.mismatches;
      if (!values.includes(content)) values.push(content);
    } else if (sep === "," && values !== undefined && values.length > 0) {
      if (!values.includes(content)) values.push(content);
    } else {
      throw new RuleError(`Illegal route rule "${rule}", The error char '${sep}' at index ${m.index} before "${content}".`);
    }
  }
  return [...condition.values()].map(compileMatcher);
}

/** A condition line split at `=>` (`ConditionStateRouter.init`): when (empty map: always), then (null: blocklist). */
export interface ConditionLine {
  readonly text: string;
  readonly when: Expression;
  readonly then: Expression | null;
}

export function parseConditionLine(text: string): ConditionLine {
  if (isBlank(text)) throw new RuleError("Illegal route rule! (an empty condition)");
  if (text.length > RULE_LIMITS.maxExpressionLength) {
    throw new RuleError(`a condition of ${text.length} characters, over the limit of ${RULE_LIMITS.maxExpressionLength}`);
  }
  const rule = text.split("consumer.").join("").split("provider.").join("");
  const i = rule.indexOf("=>");
  const whenRule = i < 0 ? null : javaTrim(rule.slice(0, i));
  const thenRule = i < 0 ? javaTrim(rule) : javaTrim(rule.slice(i + 2));
  const when = isBlank(whenRule) || whenRule === "true" ? [] : parseExpression(whenRule as string);
  const then = isBlank(thenRule) || thenRule === "false" ? null : parseExpression(thenRule);
  return { text, when, then };
}

/** The value a matcher reads: the call's method, an argument, an attachment, or a URL parameter. */
export interface MatchInput {
  readonly sample: ReadonlyMap<string, string>;
  /** The call (when side only). */
  readonly method?: string;
  readonly args?: readonly unknown[];
  readonly attachments?: Readonly<Record<string, string>>;
  /** The consumer URL `$param` references read (then side only). */
  readonly consumer?: DubboUrl;
}

function sampleValue(matcher: Matcher, input: MatchInput, when: boolean): string | undefined {
  if (matcher.kind === "param") {
    if (when && (matcher.key === "method" || matcher.key === "methods")) return input.method;
    return input.sample.get(matcher.key);
  }
  if (!when) return NOT_FOUND; // Java: no invocation on the then side → an exception, caught → not found
  if (matcher.kind === "argument") {
    const args = input.args ?? [];
    return matcher.argIndex < 0 || matcher.argIndex >= args.length ? NOT_FOUND : javaString(args[matcher.argIndex]);
  }
  if (matcher.attachment === undefined) return NOT_FOUND;
  const v = input.attachments?.[matcher.attachment];
  return typeof v === "string" ? v : undefined;
}

/** `RangeValuePattern.match`: an unusable range answers `!when` (matches on the then side). */
function matchRange(pattern: string, value: string, when: boolean): boolean {
  const dflt = !when;
  try {
    const v = dubboParseInteger(value);
    const arr = javaSplit(pattern, "~");
    if (arr.length < 2) return dflt; // Java's split drops a trailing empty part: `150~` is no range at all
    const [start, end] = arr;
    if (start === "" && end === "") return dflt;
    if (start === "") return v <= dubboParseInteger(end);
    if (end === "") return v >= dubboParseInteger(start);
    return v >= dubboParseInteger(start) && v <= dubboParseInteger(end);
  } catch {
    return dflt;
  }
}

/** `UrlUtils.isMatchGlobPattern`: `*` alone, one `*` (its last), or exact. */
function matchGlob(pattern: string | undefined, value: string): boolean {
  if (pattern === "*") return true;
  if (!pattern) return false; // the value is never empty here... unless both are: Java answers true
  const i = pattern.lastIndexOf("*");
  if (i < 0) return value === pattern;
  if (i === pattern.length - 1) return value.startsWith(pattern.slice(0, i));
  if (i === 0) return value.endsWith(pattern.slice(1));
  return value.startsWith(pattern.slice(0, i)) && value.endsWith(pattern.slice(i + 1));
}

function matchPattern(p: Pattern, value: string, input: MatchInput, when: boolean): boolean {
  if (p.kind === "range") return matchRange(p.text, value, when);
  if (p.kind === "ref" && input.consumer !== undefined) {
    const resolved = rawParameter(input.consumer, p.text.slice(1));
    if ((resolved === undefined || resolved === "") && value === "") return true;
    return matchGlob(resolved, value);
  }
  if (p.text === "*") return true;
  if (value === "") return false;
  if (p.star < 0) return value === p.text;
  if (p.star === 0) return value.endsWith(p.suffix);
  return value.startsWith(p.prefix) && (p.suffix === "" || value.endsWith(p.suffix));
}

/** `AbstractConditionMatcher.isMatch`: no value → false; mismatches first, then matches. */
function matcherMatches(matcher: Matcher, input: MatchInput, when: boolean): boolean {
  const value = sampleValue(matcher, input, when);
  if (value === undefined) return false;
  const { matches, mismatches } = matcher.compiled ?? compileMatcher(matcher).compiled!;
  for (let i = 0; i < mismatches.length; i++) if (matchPattern(mismatches[i], value, input, when)) return false;
  if (matches.length === 0) return mismatches.length > 0;
  for (let i = 0; i < matches.length; i++) if (matchPattern(matches[i], value, input, when)) return true;
  return false;
}

/** Every matcher of the expression matches (`doMatch`). */
export function expressionMatches(expr: Expression, input: MatchInput, when: boolean): boolean {
  for (let i = 0; i < expr.length; i++) if (!matcherMatches(expr[i], input, when)) return false;
  return true;
}
