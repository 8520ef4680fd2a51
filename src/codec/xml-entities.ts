// Owns `decodeXmlEntities`, `escapeXml`. Resolves the five predefined XML entities and character
// references. The parser runs with entity processing off (no DTD, so no declared entities and no
// expansion attacks). Must not change: limits are checked before memory is spent; bad input is a
// 4xx naming the problem.
import { decodeError } from "./bind-error.js";

const PREDEFINED: Readonly<Record<string, string>> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };
const REF = /&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z][\w.-]*);/g;

/**
 * Resolves the five predefined XML entities and character references. The parser runs with
 * entity processing off (no DTD, so no declared entities and no expansion attacks); this is the
 * only substitution XML text gets. Any other named entity is undeclared, so the document is invalid.
 */
export function decodeXmlEntities(text: string): string {
  if (!text.includes("&")) return text;
  return text.replace(REF, (_m, ref: string) => {
    if (ref[0] === "#") {
      const cp = ref[1] === "x" ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
      if (!Number.isFinite(cp) || cp < 1 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        throw decodeError(`malformed XML: invalid character reference &${ref.slice(0, 12)};`);
      }
      return String.fromCodePoint(cp);
    }
    const v = PREDEFINED[ref];
    if (v === undefined) throw decodeError(`malformed XML: undeclared entity &${ref.slice(0, 32)};`);
    return v;
  });
}

/** Escapes text for an XML element or attribute value. */
export function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => `&${c === "<" ? "lt" : c === ">" ? "gt" : c === "&" ? "amp" : c === '"' ? "quot" : "apos"};`);
}
