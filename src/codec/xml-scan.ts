// Owns `checkXmlShape`. Checks the shape of an XML document against its limits in one linear pass,
// before the parser sees it: every character is looked at a bounded number of times (comments, …
// Must not change: limits are checked before memory is spent; bad input is a 4xx naming the
// problem.
import { decodeError, overLimit } from "./bind-error.js";

/** The shape limits of an XML document, checked before any parser builds objects from it. */
export interface XmlShapeLimits {
  /** Deepest element nesting (the root is depth 1) → 400. */
  readonly maxXmlDepth: number;
  /** Most elements in the document → 413. */
  readonly maxXmlElements: number;
  /** Most attributes in the document → 413. */
  readonly maxXmlAttributes: number;
  /** Most attributes on one element → 413. */
  readonly maxXmlElementAttributes: number;
}

const GT = 0x3e;
const EQ = 0x3d;
const SLASH = 0x2f;
const BANG = 0x21;
const QUESTION = 0x3f;
const DQUOTE = 0x22;
const SQUOTE = 0x27;

/** Where the text after `from` reaches `end`, just past it (the end of the text when absent). */
function past(text: string, end: string, from: number): number {
  const at = text.indexOf(end, from);
  return at < 0 ? text.length : at + end.length;
}

/** Running counts of one scan, checked against the limits as they grow. */
class ShapeCount {
  depth = 0;
  private elements = 0;
  private attributes = 0;

  constructor(private readonly limits: XmlShapeLimits) {}

  element(): void {
    if (++this.elements > this.limits.maxXmlElements) {
      throw overLimit(`the XML document has more than ${this.limits.maxXmlElements} elements (limits.maxXmlElements)`);
    }
  }

  attribute(onElement: number): void {
    const l = this.limits;
    if (onElement > l.maxXmlElementAttributes) {
      throw overLimit(`an XML element has more than ${l.maxXmlElementAttributes} attributes (limits.maxXmlElementAttributes)`);
    }
    if (++this.attributes > l.maxXmlAttributes) {
      throw overLimit(`the XML document has more than ${l.maxXmlAttributes} attributes (limits.maxXmlAttributes)`);
    }
  }

  /** An element starts one level below the open ones; it stays open unless it closes itself. */
  open(selfClosing: boolean): void {
    if (this.depth + 1 > this.limits.maxXmlDepth) {
      throw decodeError(`XML nesting deeper than ${this.limits.maxXmlDepth} elements (limits.maxXmlDepth)`);
    }
    if (!selfClosing) this.depth++;
  }
}

/**
 * Reads one start tag from its `<` and counts it: its attributes (each `=` outside a quoted
 * value) and its depth. Returns where the tag ends.
 */
function startTag(text: string, i: number, count: ShapeCount): number {
  count.element();
  const n = text.length;
  let attrs = 0;
  for (let j = i + 1; j < n; j++) {
    const c = text.charCodeAt(j);
    if (c === DQUOTE || c === SQUOTE) {
      const close = text.indexOf(c === DQUOTE ? '"' : "'", j + 1);
      if (close < 0) return n;
      j = close;
    } else if (c === EQ) {
      count.attribute(++attrs);
    } else if (c === GT) {
      count.open(text.charCodeAt(j - 1) === SLASH);
      return j + 1;
    }
  }
  return n;
}

/**
 * Checks the shape of an XML document against its limits in one linear pass, before the parser
 * sees it: every character is looked at a bounded number of times (comments, CDATA and
 * processing instructions are skipped with `indexOf`). It counts, it does not validate: a
 * malformed document passes here and fails in the validator after. Throws 413 naming the limit
 * (elements, attributes) or 400 (depth).
 */
export function checkXmlShape(text: string, limits: XmlShapeLimits): void {
  const count = new ShapeCount(limits);
  let i = text.indexOf("<");
  while (i >= 0) {
    const c = text.charCodeAt(i + 1);
    if (c === BANG) {
      if (text.startsWith("<!--", i)) i = past(text, "-->", i + 4);
      else if (text.startsWith("<![CDATA[", i)) i = past(text, "]]>", i + 9);
      else i = past(text, ">", i + 2);
    } else if (c === QUESTION) {
      i = past(text, "?>", i + 2);
    } else if (c === SLASH) {
      count.depth--;
      i = past(text, ">", i + 2);
    } else {
      i = startTag(text, i, count);
    }
    i = text.indexOf("<", i);
  }
}
