// Owns `compileJsonBinder`, `collecting`, `BindFailure`, `compileTextConverter`, …: arguments bound
// to a method's parameters on top of converters.ts, with converter-extras.ts registered (a binder
// converts every type). Must not change: limits are checked before memory is spent; bad input is a
// 4xx naming the problem.
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { ParamDescriptor } from "../service/descriptors.js";
import { StreamedFile } from "../service/file-upload.js";
import type { TypeDesc } from "../service/type-desc.js";
import { InMemoryFile } from "../service/type-desc.js";
import { checkDigits } from "./big-numbers.js";
import { bindError } from "./bind-error.js";
import { converterExtras } from "./converter-extras.js";
import {
  addProblem,
  checkedNumber,
  collect,
  type BindProblem,
  compileConverter,
  type Converter,
  fail,
  isPlainObject,
  isStop,
  toBigInt,
  toDate,
  swapSink,
  useConverterExtras,
} from "./converters.js";
import { FORBIDDEN_KEYS } from "./json.js";

export { collect, compileConverter, type Converter, missing, missingField } from "./converters.js";

// A module that binds requests converts every type: the Java value-class parsers and uploads too.
useConverterExtras(converterExtras);

/** A JSON binding that found problems: all of them, and the arguments bound despite them. */
export class BindFailure extends RpcError {
  constructor(
    readonly problems: readonly BindProblem[],
    /** The arguments bound (a bad one left undefined); undefined when none could be. */
    readonly partial: unknown[] | undefined,
    /** Binding stopped at converters.ts's cap (100): there may be more. */
    readonly stopped: boolean,
  ) {
    const lines = problems.map((p) => (p.where ? `${p.where} ${p.description}` : p.description));
    super(Code.InvalidArgument, stopped ? `${lines.join("; ")}; and more (binding stopped after ${problems.length} problems)` : lines.join("; "), {
      legacyStatus: 40,
    });
  }
}

/** Runs a binding that collects its problems: its arguments, or a {@link BindFailure} listing them all. */
export function collecting<T>(bind: (body: T) => unknown[], body: T): unknown[] {
  const mine: BindProblem[] = [];
  const outer = swapSink(mine);
  let args: unknown[] | undefined;
  let stopped = false;
  try {
    args = bind(body);
  } catch (e) {
    stopped = isStop(e);
    if (!stopped) collect(e);
  } finally {
    swapSink(outer);
  }
  if (mine.length > 0) throw new BindFailure(mine, stopped ? undefined : args, stopped);
  return args as unknown[];
}

/** An optional parameter's converter: absent (or null) binds `undefined`. */
function orUndefined<V>(conv: (v: V, where: string) => unknown): (v: V | undefined, where: string) => unknown {
  return (v, w) => (v === undefined || v === null ? undefined : conv(v, w));
}

/** The converters of a method's parameters, optional ones wrapped by {@link orUndefined}. */
export function paramConverters(params: readonly ParamDescriptor[]): Converter[] {
  return params.map((p) => (p.optional ? orUndefined(compileConverter(p.type)) : compileConverter(p.type)));
}

/** A decimal number as text (what a number parameter takes from a form, a query or a path). */
const DECIMAL = /^\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*$/;
const INTEGER = /^\s*[-+]?\d+\s*$/;

/** Converts text (form fields, query values, text parts) to a parameter's type. */
export function compileTextConverter(t: TypeDesc): (text: string, where: string) => unknown {
  switch (t.kind) {
    case "string":
      return t.java ? (compileConverter(t) as (text: string, where: string) => unknown) : (s) => s;
    case "any":
      return (s) => s;
    case "number":
      if (t.java) {
        const small = compileConverter(t);
        return (s, w) => small(/^\s*[-+]?\d{1,6}\s*$/.test(s) ? Number(s) : s, w);
      }
      return (s, w) => {
        checkDigits(s, w);
        // Decimal only: Number() would also read "0x10", "0b1" and "0o7".
        const n = DECIMAL.test(s) ? Number(s) : Number.NaN;
        if (!Number.isFinite(n)) return fail(w, "a finite number", s);
        // An integer past 2^53 would be silently rounded (a database id, a Java long).
        if (Number.isInteger(n) && !Number.isSafeInteger(n) && INTEGER.test(s))
          return fail(w, "an integer within ±9007199254740991 (declare the parameter bigint or string for larger ones)", s);
        return checkedNumber(n, t.proto, w, s);
      };
    case "boolean":
      return (s, w) => {
        const x = s.trim().toLowerCase();
        if (x === "true" || x === "1" || x === "on" || x === "yes") return true;
        if (x === "false" || x === "0" || x === "off" || x === "no") return false;
        return fail(w, "a boolean (true or false)", s);
      };
    case "bigint":
      return toBigInt;
    case "date":
      return (s, w) => toDate(/^\d+$/.test(s) ? Number(s) : s, w);
    case "bytes":
      return (s) => Buffer.from(s, "utf8");
    case "file":
      return (s) => InMemoryFile.wrap(Buffer.from(s, "utf8"), "", "text/plain");
    case "upload":
      return (s) => StreamedFile.fromBytes(Buffer.from(s, "utf8"), "", "text/plain");
    default: {
      // Structured types in a text field are JSON (Dubbo does the same for query values).
      const conv = compileConverter(t);
      return (s, w) => {
        let v: unknown;
        try {
          v = JSON.parse(s, (k, x) => (FORBIDDEN_KEYS.has(k) ? undefined : x));
        } catch {
          return fail(w, "JSON text", s);
        }
        return conv(v, w);
      };
    }
  }
}

/** Names a parameter in errors: `parameter #2 (age)`. */
export function paramLabel(p: ParamDescriptor, position: number): string {
  return p.name ? `parameter #${position + 1} (${p.name})` : `parameter #${position + 1}`;
}

function takesArray(t: TypeDesc): boolean {
  return t.kind === "array" || t.kind === "bytes" || t.kind === "file" || t.kind === "upload";
}
function objectLike(t: TypeDesc): boolean {
  return t.kind === "class" || t.kind === "map" || t.kind === "any";
}

/** The two forms of a JSON argument list: an array by position, an object by parameter name. */
function argumentBinders(params: readonly ParamDescriptor[], convs: readonly Converter[], labels: readonly string[]) {
  const n = params.length;
  const positional = (arr: unknown[]): unknown[] => {
    if (arr.length > n || (arr.length < n && !params[arr.length].optional)) {
      const missing = arr.length < n ? `${labels[arr.length]} is missing: ` : "";
      throw bindError(`${missing}expected ${n} argument${n === 1 ? "" : "s"} in the JSON array, got ${arr.length}`);
    }
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      if (i >= arr.length && !params[i].optional) throw bindError(`${labels[i]} is missing: the JSON array has ${arr.length} arguments`);
      try {
        out[i] = convs[i](arr[i], labels[i]);
      } catch (e) {
        collect(e);
      }
    }
    return out;
  };
  const byName = (obj: Record<string, unknown>): unknown[] => {
    const out = new Array(n);
    for (let i = 0; i < n; i++) {
      const name = params[i].name as string;
      if (!Object.hasOwn(obj, name) && !params[i].optional) {
        addProblem({ where: labels[i], description: "is missing" });
        continue;
      }
      try {
        out[i] = convs[i](obj[name], labels[i]);
      } catch (e) {
        collect(e);
      }
    }
    return out;
  };
  return { positional, byName };
}

/**
 * Binds a decoded JSON body to a method's parameters: a JSON array of the
 * arguments in order; for one parameter also the bare value; an object keyed by parameter names
 * when every parameter is named. Every missing field and bad value is found before it fails: a
 * {@link BindFailure} lists them all (up to converters.ts's cap of 100) with the arguments bound.
 */
export function compileJsonBinder(params: readonly ParamDescriptor[]): (body: unknown) => unknown[] {
  const convs = paramConverters(params);
  const labels = params.map((p, i) => paramLabel(p, i));
  const n = params.length;
  const allNamed = n > 0 && params.every((p) => p.name);
  const { positional, byName } = argumentBinders(params, convs, labels);
  if (n === 0) {
    return (body) => {
      if (body === null || body === undefined || (Array.isArray(body) && body.length === 0)) return [];
      if (isPlainObject(body) && Object.keys(body).length === 0) return [];
      throw bindError("this method takes no arguments");
    };
  }
  if (n === 1) {
    const p = params[0];
    const wantsArray = takesArray(p.type);
    const name = p.name;
    const one = (body: unknown): unknown[] => {
      if (Array.isArray(body)) {
        if (!wantsArray) return positional(body);
        // A bare array is the value; `[[...]]` is the value wrapped in an argument array.
        if (body.length === 1 && Array.isArray(body[0]) && p.type.kind === "array" && !takesArray((p.type as { element: TypeDesc }).element)) {
          return [convs[0](body[0], labels[0])];
        }
        // Bytes as base64 text in the argument array (`["AQID"]`, the OpenAPI document's array form).
        if (body.length === 1 && typeof body[0] === "string" && p.type.kind !== "array") return [convs[0](body[0], labels[0])];
        return [convs[0](body, labels[0])];
      }
      if (name && !objectLike(p.type) && isPlainObject(body) && Object.hasOwn(body, name)) return byName(body);
      return [convs[0](body, labels[0])];
    };
    return (body) => collecting(one, body);
  }
  const many = (body: unknown): unknown[] => {
    if (Array.isArray(body)) return positional(body);
    if (allNamed && isPlainObject(body)) return byName(body);
    throw bindError(
      allNamed
        ? `expected a JSON array of ${n} arguments or an object with members ${params.map((p) => p.name).join(", ")}`
        : `expected a JSON array of ${n} arguments`,
    );
  };
  return (body) => collecting(many, body);
}
