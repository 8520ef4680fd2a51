// Owns `XML_TEXT`, `XML_ATTR`, `XML_FORBIDDEN`, `compileXmlBinder`. The parser's names for an
// element's text, for attributes, and for forbidden element names. Must not change: limits are
// checked before memory is spent; bad input is a 4xx naming the problem.
import type { ParamDescriptor } from "../service/descriptors.js";
import type { TypeDesc } from "../service/type-desc.js";
import { bindError } from "./bind-error.js";
import { type Converter, compileConverter, compileTextConverter, paramLabel, missingField } from "./binder.js";
import { FORBIDDEN_KEYS } from "./json.js";
import { cutText } from "../protocol/wire-text.js";

/** The parser's names for an element's text, for attributes, and for forbidden element names. */
export const XML_TEXT = "#text";
export const XML_ATTR = "@_";
export const XML_FORBIDDEN = "#forbidden";

type XmlNode = string | XmlObject | XmlNode[];
interface XmlObject {
  [key: string]: XmlNode;
}

function isObject(v: unknown): v is XmlObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The child elements and attributes of an element, by name, in document order. */
function children(v: XmlObject): [string, XmlNode][] {
  const out: [string, XmlNode][] = [];
  for (const k of Object.keys(v)) {
    if (k === XML_TEXT || k === XML_FORBIDDEN) continue;
    const name = k.startsWith(XML_ATTR) ? k.slice(XML_ATTR.length) : k;
    if (FORBIDDEN_KEYS.has(name)) continue;
    out.push([name, v[k]]);
  }
  return out;
}

function member(v: XmlObject, name: string): XmlNode | undefined {
  return Object.hasOwn(v, name) ? v[name] : Object.hasOwn(v, XML_ATTR + name) ? v[XML_ATTR + name] : undefined;
}

/** Plain data of an untyped element: text stays text, elements become objects, repeats arrays. */
function plain(v: XmlNode): unknown {
  if (typeof v === "string") return v;
  if (Array.isArray(v)) return v.map(plain);
  const kids = children(v);
  if (kids.length === 0) return typeof v[XML_TEXT] === "string" ? v[XML_TEXT] : "";
  const out: Record<string, unknown> = {};
  for (const [k, x] of kids) out[k] = plain(x);
  return out;
}

/** The text of an element that may carry attributes (`<age unit="y">3</age>`). */
function textOf(v: XmlNode): string | undefined {
  if (typeof v === "string") return v;
  if (isObject(v) && Object.keys(v).every((k) => k === XML_TEXT || k.startsWith(XML_ATTR))) {
    return typeof v[XML_TEXT] === "string" ? (v[XML_TEXT] as string) : "";
  }
  return undefined;
}

const cache = new WeakMap<TypeDesc, Converter>();

/** Arrays from repeated elements, or from a wrapper element holding them. */
function xmlArrayConverter(t: Extract<TypeDesc, { kind: "array" }>): Converter {
  const el = compileXmlConverter(t.element);
  const itemFields = t.element.kind === "class" ? new Set(t.element.fields.map((f) => f.name)) : undefined;
  return (v, w) => {
    let items: XmlNode[];
    if (Array.isArray(v)) items = v;
    else if (v === "") items = [];
    else if (isObject(v)) {
      const kids = children(v);
      // `<tags><tag>a</tag><tag>b</tag></tags>`: a wrapper element around the items.
      items = kids.length === 1 && !itemFields?.has(kids[0][0]) ? [kids[0][1]].flat() : [v];
    } else items = [v as XmlNode];
    return items.map((x, i) => el(x, `${w}[${i}]`));
  };
}

/** Maps from child elements. */
function xmlMapConverter(val: Converter, asMap: boolean): Converter {
  return (v, w) => {
    if (v === "") return asMap ? new Map() : {};
    if (!isObject(v)) throw bindError(`${w} must be an element with child elements`);
    const entries = children(v).map(([k, x]) => [k, val(x, `${w}.${cutText(k)}`)] as [string, unknown]);
    return asMap ? new Map(entries) : Object.fromEntries(entries);
  };
}

/** Classes field by field, from child elements or attributes. */
function xmlClassConverter(t: Extract<TypeDesc, { kind: "class" }>): Converter {
  const { ctor } = t;
  let fields: { name: string; optional: boolean; conv: Converter }[] | undefined;
  return (v, w) => {
    if (v !== "" && !isObject(v)) throw bindError(`${w} must be an element with child elements (${ctor.name})`);
    fields ??= t.fields.map((f) => ({ name: f.name, optional: f.optional, conv: compileXmlConverter(f.type) }));
    const out = Object.create(ctor.prototype) as Record<string, unknown>;
    for (const f of fields) {
      const x = v === "" ? undefined : member(v as XmlObject, f.name);
      if (x !== undefined) out[f.name] = f.conv(x, `${w}.${f.name}`);
      else if (!f.optional) throw missingField(w, f.name);
    }
    return out;
  };
}

/** Scalars, bytes (base64) and files: from the element's text. */
function xmlScalarConverter(t: TypeDesc): Converter {
  const fromText = t.kind === "bytes" || t.kind === "file" ? compileConverter(t) : compileTextConverter(t);
  return (v, w) => {
    const s = textOf(v as XmlNode);
    if (s === undefined) throw bindError(`${w} must be a text element, got ${Array.isArray(v) ? "repeated elements" : "child elements"}`);
    return fromText(s, w);
  };
}

/**
 * Compiles a converter from a parsed XML element to a type: scalars from the element's text,
 * classes field by field (child elements or attributes), maps from child elements, arrays from
 * repeated elements or a wrapper element holding them.
 */
function compileXmlConverter(t: TypeDesc): Converter {
  const hit = cache.get(t);
  if (hit) return hit;
  let conv: Converter;
  switch (t.kind) {
    case "any":
      conv = (v) => plain(v as XmlNode);
      break;
    case "array":
      conv = xmlArrayConverter(t);
      break;
    case "map":
      conv = xmlMapConverter(compileXmlConverter(t.value), t.as === "map");
      break;
    case "class":
      conv = xmlClassConverter(t);
      break;
    default:
      conv = xmlScalarConverter(t);
  }
  cache.set(t, conv);
  return conv;
}

/**
 * Binds the document's root element to a method's parameters: with one parameter the root is
 * its value (`<user>…</user>` → `user: User`); with several, the root's children are the
 * arguments, by name for named parameters and in order for the others.
 */
export function compileXmlBinder(params: readonly ParamDescriptor[]): (root: unknown) => unknown[] {
  const n = params.length;
  const convs = params.map((p) => compileXmlConverter(p.type));
  const labels = params.map((p, i) => paramLabel(p, i));
  if (n === 0) return () => [];
  if (n === 1) return (root) => [convs[0](root, labels[0])];
  return (root) => {
    if (!isObject(root)) throw bindError(`expected a root element holding ${n} argument elements`);
    const named = new Set(params.flatMap((p) => (p.name ? [p.name] : [])));
    const rest = children(root).filter(([k]) => !named.has(k));
    let next = 0;
    return params.map((p, i) => {
      const x = p.name ? member(root, p.name) : rest[next++]?.[1];
      if (x !== undefined) return convs[i](x, labels[i]);
      if (p.optional) return undefined;
      throw bindError(`${labels[i]} is missing from the XML document`);
    });
  };
}
