// Owns `constraintComment`: a field's validation constraints as the text of its comment in an
// exported .proto (`validate: min = 1, pattern = "…"`), and `checksSomething`. Kept apart from
// constraints.ts, which decorators load in browsers too, so a bundle of a contract does not carry
// them. Must not change: the comment's form (exported .proto files are compared by their users' tooling).
import { CONSTRAINT_KEYS, type Constraints } from "./constraints.js";

/** True when constraints check anything (`description` alone does not). */
export function checksSomething(c: Constraints | undefined): boolean {
  return c !== undefined && CONSTRAINT_KEYS.some((k) => k !== "description" && c[k] !== undefined);
}

function showBound(v: number | bigint | Date | string): string {
  if (v instanceof Date) return JSON.stringify(v.toISOString());
  return typeof v === "string" ? JSON.stringify(v) : String(v);
}

/**
 * The constraints as one line of text, `pattern = "^[a-z]+$", maxItems = 3` (bounds, lengths,
 * pattern, enum, format, in that order); undefined when nothing is checked. What the exported
 * .proto and reflection show after `validate:` in a field's comment.
 */
function constraintText(c: Constraints | undefined): string | undefined {
  if (!checksSomething(c)) return undefined;
  const k = c as Constraints;
  const parts: string[] = [];
  if (k.min !== undefined) parts.push(`min = ${showBound(k.min)}`);
  if (k.max !== undefined) parts.push(`max = ${showBound(k.max)}`);
  for (const n of ["minLength", "maxLength", "minItems", "maxItems"] as const) if (k[n] !== undefined) parts.push(`${n} = ${k[n]}`);
  if (k.pattern !== undefined) parts.push(`pattern = ${JSON.stringify(typeof k.pattern === "string" ? k.pattern : k.pattern.source)}`);
  if (k.enum !== undefined) parts.push(`enum = [${k.enum.map((v) => (typeof v === "string" ? JSON.stringify(v) : String(v))).join(", ")}]`);
  if (k.format !== undefined) parts.push(`format = ${JSON.stringify(k.format)}`);
  return parts.join(", ");
}

/** A field's comment in the exported .proto: its description, then `validate: …`; undefined when neither. */
export function constraintComment(c: Constraints | undefined): string | undefined {
  const lines: string[] = [];
  if (c?.description) lines.push(...c.description.split(/\r?\n/));
  const text = constraintText(c);
  if (text) lines.push(`validate: ${text}`);
  return lines.length ? lines.join("\n") : undefined;
}
