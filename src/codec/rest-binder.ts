// Owns `compileRestBinder`. Compiles the REST binder of a method with a REST mapping. Must not
// change: limits are checked before memory is spent; bad input is a 4xx naming the problem.
import type { HeaderMap } from "../protocol/headers.js";
import type { MethodDescriptor, ParamDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { bindError } from "./bind-error.js";
import { type NumberLimits, withNumberLimits } from "./big-numbers.js";
import { compileTextConverter } from "./binder.js";

/**
 * The arguments of a REST-mapped method: path variables, query parameters and headers converted
 * from text, and the body (if any parameter comes from it) decoded by the usual body codecs.
 * Compiled once per method at registration.
 */
export interface RestBinder {
  /**
   * The method as the body codecs see it: only its body parameters. Undefined when no parameter
   * comes from the body (the body is then not read).
   */
  readonly body: MethodDescriptor | undefined;
  /**
   * The arguments from the path values (in template order), the raw query and the headers; body
   * slots left empty. `limits`: the server's, for numbers from text (`maxNumberDigits`).
   */
  bind(pathValues: readonly string[], query: string | undefined, headers: HeaderMap, limits?: NumberLimits): unknown[];
  /** Puts the body codec's arguments into their slots of `args`. */
  merge(args: unknown[], bodyArgs: readonly unknown[]): unknown[];
}

interface Slot {
  readonly position: number;
  readonly name: string;
  readonly label: string;
  readonly optional: boolean;
  /** Array parameters take every value of a repeated query key (or a header's comma-separated list). */
  readonly many: boolean;
  readonly conv: (text: string, where: string) => unknown;
}

const LABEL = { path: "path parameter", query: "query parameter", header: "header" } as const;

function slotOf(p: ParamDescriptor, position: number, source: "path" | "query" | "header"): Slot {
  const many = source !== "path" && p.type.kind === "array";
  const t: TypeDesc = many ? (p.type as { element: TypeDesc }).element : p.type;
  const name = p.name as string;
  return { position, name, label: `${LABEL[source]} "${name}"`, optional: p.optional, many, conv: compileTextConverter(t) };
}

function decode(text: string, label: string, plus: boolean): string {
  if (!text.includes("%") && !(plus && text.includes("+"))) return text;
  try {
    return decodeURIComponent(plus ? text.replaceAll("+", " ") : text);
  } catch {
    throw bindError(`${label} is not valid percent-encoded UTF-8: ${JSON.stringify(text.slice(0, 60))}`);
  }
}

/**
 * The values of the wanted keys of a raw query string (`a=1&b=2&a=3`), percent-decoded, `+` as
 * space; `a[]` counts as `a`.
 */
function queryValues(query: string | undefined, wanted: ReadonlySet<string>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  if (!query) return out;
  for (const pair of query.split("&")) {
    if (pair === "") continue;
    const eq = pair.indexOf("=");
    let key = decode(eq < 0 ? pair : pair.slice(0, eq), "a query parameter name", true);
    // `tag[]=a&tag[]=b` (what axios, jQuery and qs send for arrays) is `tag=a&tag=b`.
    if (!wanted.has(key) && key.endsWith("[]")) key = key.slice(0, -2);
    if (!wanted.has(key)) continue;
    const value = decode(eq < 0 ? "" : pair.slice(eq + 1), `query parameter "${key}"`, true);
    const list = out.get(key);
    if (list) list.push(value);
    else out.set(key, [value]);
  }
  return out;
}

function convertAll(s: Slot, values: readonly string[]): unknown {
  if (s.many) return values.map((v, i) => s.conv(v, `${s.label}[${i}]`));
  return s.conv(values[0], s.label);
}

function missing(s: Slot, source: string): never {
  throw bindError(`${s.label} is missing: ${source === "header" ? "send the header" : "add it to the query string"} (or declare it optional: true)`);
}

/** Compiles the REST binder of a method with a REST mapping. */
export function compileRestBinder(md: MethodDescriptor): RestBinder {
  const route = md.http;
  if (!route) throw new TypeError(`${md.path} has no REST mapping`);
  const vars = route.segments.flatMap((s) => (typeof s === "string" ? [] : [s.param]));
  const pathSlots: Slot[] = [];
  const querySlots: Slot[] = [];
  const headerSlots: Slot[] = [];
  const bodyParams: ParamDescriptor[] = [];
  const bodyPositions: number[] = [];
  md.params.forEach((p, i) => {
    if (p.in === "path") pathSlots[vars.indexOf(p.name as string)] = slotOf(p, i, "path");
    else if (p.in === "query") querySlots.push(slotOf(p, i, "query"));
    else if (p.in === "header") headerSlots.push(slotOf(p, i, "header"));
    else {
      bodyParams.push(p);
      bodyPositions.push(i);
    }
  });
  const slots: Slots = { n: md.params.length, pathSlots, querySlots, headerSlots, wanted: new Set(querySlots.map((s) => s.name)) };
  return {
    body: bodyParams.length > 0 ? { ...md, params: bodyParams } : undefined,
    bind: (pathValues, query, headers, limits) => withNumberLimits(limits, () => bindSlots(slots, pathValues, query, headers)),
    merge(args, bodyArgs) {
      for (let i = 0; i < bodyPositions.length; i++) args[bodyPositions[i]] = bodyArgs[i];
      return args;
    },
  };
}

/** A REST method's parameters that come from text, by source. */
interface Slots {
  readonly n: number;
  readonly pathSlots: readonly Slot[];
  readonly querySlots: readonly Slot[];
  readonly headerSlots: readonly Slot[];
  /** The query keys some parameter takes. */
  readonly wanted: ReadonlySet<string>;
}

/** The arguments from text (path, query, headers); body slots left empty. */
function bindSlots(
  { n, pathSlots, querySlots, headerSlots, wanted }: Slots,
  pathValues: readonly string[],
  query: string | undefined,
  headers: HeaderMap,
): unknown[] {
  const args = new Array(n);
  for (let i = 0; i < pathSlots.length; i++) {
    const s = pathSlots[i];
    args[s.position] = s.conv(decode(pathValues[i], s.label, false), s.label);
  }
  if (querySlots.length > 0) {
    const values = queryValues(query, wanted);
    for (const s of querySlots) {
      const v = values.get(s.name);
      if (v !== undefined) args[s.position] = convertAll(s, v);
      else if (!s.optional) missing(s, "query");
    }
  }
  for (const s of headerSlots) {
    const raw = headers[s.name];
    if (raw === undefined) {
      if (!s.optional) missing(s, "header");
      continue;
    }
    const list = Array.isArray(raw) ? raw : [String(raw)];
    args[s.position] = convertAll(s, s.many ? list.flatMap((x) => x.split(",").map((y) => y.trim())) : list);
  }
  return args;
}
