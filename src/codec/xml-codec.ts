// Owns `parseXml`, `xmlRequestCodec`, `xmlResponseCodec`, `textXmlResponseCodec`. Parses an XML
// document (no DTD, no entity expansion, its shape and size within `limits`) and returns its root
// element's content, or throws 400 (status 25) saying what is wrong, 413 for a limit. Must not
// change: limits are checked before memory is spent; bad input is a 4xx naming the problem.
import type * as Fxp from "fast-xml-parser";
import type { MethodDescriptor } from "../service/descriptors.js";
import { withNumberLimits } from "./big-numbers.js";
import { decodeError, overLimit } from "./bind-error.js";
import { checkCharset, decodeText } from "./charset.js";
import type { RequestCodec, ResponseCodec } from "./codec.js";
import { requireIdlLess } from "./idl-guard.js";
import { lazyModule } from "./lazy-module.js";
import { encodeJsonValue } from "./json-codec.js";
import { FORBIDDEN_KEYS } from "./json.js";
import { compileXmlBinder, XML_ATTR, XML_FORBIDDEN, XML_TEXT } from "./xml-binder.js";
import { decodeXmlEntities, escapeXml } from "./xml-entities.js";
import { checkXmlShape, type XmlShapeLimits } from "./xml-scan.js";

/** The limits `parseXml` applies: the document's shape, then its size. */
export interface XmlLimits extends XmlShapeLimits {
  /** Largest document handed to the parser, bytes (UTF-8) → 413. */
  readonly maxXmlBytes: number;
}

/**
 * Refuses a document larger than `max` bytes (UTF-8) before the parser sees it: fast-xml-parser
 * costs ~0.1–0.25 µs per byte and builds its text one character at a time (a 4 MiB text node
 * held the event loop ~1.2 s and added ~170 MB RSS), where JSON.parse costs ~6 ns per byte.
 */
function checkXmlSize(text: string, max: number): void {
  // A string of n UTF-16 units is at most 3n UTF-8 bytes: count exactly only when it matters.
  if (text.length * 3 <= max) return;
  if (text.length > max || Buffer.byteLength(text, "utf8") > max) {
    throw overLimit(`the XML document is larger than ${max} bytes (limits.maxXmlBytes)`);
  }
}

const DTD = /<!\s*(DOCTYPE|ENTITY|ELEMENT|ATTLIST)/i;

/** fast-xml-parser (~0.4 MiB of live heap) waits for the first XML request. */
const fxp = lazyModule(() => require("fast-xml-parser") as typeof Fxp);

const parsers = new Map<number, Fxp.XMLParser>();
const renameForbidden = (name: string) => (FORBIDDEN_KEYS.has(name) ? XML_FORBIDDEN : name);

/** One parser per depth limit (in practice one): options are fixed at construction. */
function parserFor(maxDepth: number): Fxp.XMLParser {
  let p = parsers.get(maxDepth);
  if (!p) {
    p = new (fxp().XMLParser)({
      // No entity expansion: DTDs are refused and the predefined entities are resolved by us.
      processEntities: false,
      htmlEntities: false,
      ignoreDeclaration: true,
      ignorePiTags: true,
      ignoreAttributes: false,
      attributeNamePrefix: XML_ATTR,
      textNodeName: XML_TEXT,
      // Values stay text; the binder converts them to each field's declared type.
      parseTagValue: false,
      parseAttributeValue: false,
      trimValues: true,
      // The parser lets the root sit above `maxNestedTags` levels; count the root as one.
      maxNestedTags: Math.max(0, maxDepth - 1),
      transformTagName: renameForbidden,
      transformAttributeName: renameForbidden,
      tagValueProcessor: (_name, value) => decodeXmlEntities(value),
      attributeValueProcessor: (_name, value) => decodeXmlEntities(value),
    });
    parsers.set(maxDepth, p);
  }
  return p;
}

/**
 * Parses an XML document (no DTD, no entity expansion, its shape and size within `limits`) and
 * returns its root element's content, or throws 400 (status 25) saying what is wrong, 413 for a
 * limit. The shape (depth, elements, attributes) is checked by a linear pre-scan, then the size
 * (`maxXmlBytes`), before the parser builds anything: a document over a limit costs a few ns per
 * byte, not the parser's ~0.1–0.25 µs (bench/parsers.mjs).
 */
export function parseXml(text: string, limits: XmlLimits): unknown {
  if (text.trim() === "") throw decodeError("empty XML body");
  if (DTD.test(text)) throw decodeError("XML document type declarations (DTD, ENTITY) are not accepted");
  checkXmlShape(text, limits);
  checkXmlSize(text, limits.maxXmlBytes);
  const maxDepth = limits.maxXmlDepth;
  const valid = fxp().XMLValidator.validate(text);
  if (valid !== true) {
    const { msg, line, col } = valid.err;
    throw decodeError(`malformed XML at line ${line}, column ${col}: ${msg}`);
  }
  let doc: Record<string, unknown>;
  try {
    doc = parserFor(maxDepth).parse(text);
  } catch (e) {
    const m = (e as Error).message;
    if (/nested/i.test(m)) throw decodeError(`XML nesting deeper than ${maxDepth} elements`);
    throw decodeError(`malformed XML: ${m}`, e);
  }
  const roots = Object.keys(doc).filter((k) => k !== XML_TEXT && !k.startsWith("?"));
  if (roots.length !== 1 || Array.isArray(doc[roots[0]])) throw decodeError("malformed XML: a document has exactly one root element");
  if (roots[0] === XML_FORBIDDEN) throw decodeError("malformed XML: the root element has a reserved name");
  return doc[roots[0]];
}

const binders = new WeakMap<MethodDescriptor, (root: unknown) => unknown[]>();

/** The compiled XML binder of a method (cached: built on its first XML call). */
function xmlBinder(method: MethodDescriptor): (root: unknown) => unknown[] {
  let bind = binders.get(method);
  if (!bind) {
    bind = compileXmlBinder(method.params);
    binders.set(method, bind);
  }
  return bind;
}

/** `application/xml`, `text/xml`: the document decodes into the method's (single object) parameter. */
export const xmlRequestCodec: RequestCodec = {
  mediaTypes: ["application/xml", "text/xml"],
  responseMediaType: "application/xml",
  decode(method, body, mediaType, limits) {
    requireIdlLess(method, mediaType.type);
    const root = parseXml(decodeText(body, checkCharset(mediaType.params.charset)), limits);
    const bind = xmlBinder(method);
    return withNumberLimits(limits, () => bind(root));
  },
};

const NAME = /^[A-Za-z_][\w.-]*$/;

/** A valid XML element name for a JavaScript key (invalid characters become `_`). */
function elementName(key: string): string {
  if (NAME.test(key) && !/^xml/i.test(key)) return key;
  const s = key.replace(/[^\w.-]/g, "_");
  return /^[A-Za-z_]/.test(s) && !/^xml/i.test(s) ? s : `_${s}`;
}

function writeElement(out: string[], name: string, v: unknown): void {
  if (v === null || v === undefined) {
    out.push(`<${name}/>`);
  } else if (Array.isArray(v)) {
    // Repeated elements, the way JAXB writes a list field.
    for (const x of v) writeElement(out, name, x);
  } else if (typeof v === "object") {
    out.push(`<${name}>`);
    for (const [k, x] of Object.entries(v)) {
      if (x !== null && x !== undefined) writeElement(out, elementName(k), x);
    }
    out.push(`</${name}>`);
  } else {
    out.push(`<${name}>${escapeXml(String(v))}</${name}>`);
  }
}

function rootName(method: MethodDescriptor, value: unknown): string {
  if (method.responseType) return elementName(method.responseType.name);
  if (typeof value === "object" && value !== null && !Array.isArray(value)) {
    const ctor = (value as { constructor?: { name?: string } }).constructor;
    const n = ctor?.name;
    if (n && n !== "Object" && n !== "Map") return elementName(n);
  }
  return "response";
}

/**
 * Encodes a result as an XML document: the root element is named after the result's class (or
 * the .proto message), `response` for plain objects; members become child elements, arrays
 * repeated elements. Values are first reduced to JSON data, so bytes are base64, dates ISO text.
 */
function encodeXmlValue(method: MethodDescriptor, value: unknown): string {
  const data: unknown = JSON.parse(encodeJsonValue(method, value));
  const root = rootName(method, value);
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  if (Array.isArray(data)) {
    out.push(`<${root}>`);
    for (const x of data) writeElement(out, "item", x);
    out.push(`</${root}>`);
  } else {
    writeElement(out, root, data);
  }
  return out.join("");
}

export const xmlResponseCodec: ResponseCodec = {
  mediaType: "application/xml",
  encode: encodeXmlValue,
};

/** `text/xml` answers for clients that ask for it by name. */
export const textXmlResponseCodec: ResponseCodec = {
  mediaType: "text/xml",
  encode: encodeXmlValue,
};
