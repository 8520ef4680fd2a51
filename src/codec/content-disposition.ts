/**
 * The Content-Disposition header of a multipart part (RFC 7578, RFC 6266, RFC 5987 extended
 * values): its type and parameters. Our own parser, not another package's internals. Must keep:
 * quoted strings with backslash escapes, `name*=charset'lang'%XX` winning over `name=`, raw UTF-8.
 */

/** A Content-Disposition header: its type (lower case) and its parameters (names in lower case). */
export interface Disposition {
  readonly type: string;
  readonly params: ReadonlyMap<string, string>;
}

/**
 * Parses a header value as the multipart reader hands it over: one character per byte (latin1),
 * so raw UTF-8 in a quoted name is decoded here. A value that cannot be parsed is left out.
 */
export function parseDisposition(header: string): Disposition {
  const semi = header.indexOf(";");
  const type = (semi < 0 ? header : header.slice(0, semi)).trim().toLowerCase();
  const params = new Map<string, string>();
  const extended = new Set<string>();
  let i = semi < 0 ? header.length : semi + 1;
  while (i < header.length) {
    const eq = header.indexOf("=", i);
    const next = header.indexOf(";", i);
    if (eq < 0 || (next >= 0 && next < eq)) {
      if (next < 0) break;
      i = next + 1;
      continue;
    }
    const key = header.slice(i, eq).trim().toLowerCase();
    const [raw, end] = readValue(header, eq + 1);
    i = end + 1;
    if (key.endsWith("*")) {
      const name = key.slice(0, -1);
      const value = extendedValue(raw);
      if (value === undefined) continue;
      params.set(name, value);
      extended.add(name);
    } else if (key !== "" && !extended.has(key)) {
      params.set(key, utf8(raw));
    }
  }
  return { type, params };
}

/** A parameter's value from `from` (a quoted string or a token) and the index of the `;` after it (or the end). */
function readValue(s: string, from: number): [string, number] {
  let i = from;
  while (s[i] === " " || s[i] === "\t") i++;
  if (s[i] !== '"') {
    const end = s.indexOf(";", i);
    return [s.slice(i, end < 0 ? s.length : end).trim(), end < 0 ? s.length : end];
  }
  let out = "";
  for (i++; i < s.length && s[i] !== '"'; i++) {
    if (s[i] === "\\" && i + 1 < s.length) i++;
    out += s[i];
  }
  const end = s.indexOf(";", i);
  return [out, end < 0 ? s.length : end];
}

/** Raw bytes (one character each) read as UTF-8 when any is not ASCII. */
function utf8(s: string): string {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.from(s, "latin1").toString("utf8");
  return s;
}

/** An RFC 5987 value, `charset'language'percent-encoded`; undefined when malformed or of an unknown charset. */
function extendedValue(v: string): string | undefined {
  const m = /^([^']*)'[^']*'(.*)$/.exec(v);
  if (!m) return undefined;
  const bytes = Buffer.from(
    m[2].replace(/%([0-9a-fA-F]{2})|[^%]/g, (c, hex: string | undefined) => (hex ? String.fromCharCode(Number.parseInt(hex, 16)) : c)),
    "latin1",
  );
  const charset = m[1].toLowerCase();
  if (charset === "utf-8" || charset === "utf8") return bytes.toString("utf8");
  if (charset === "iso-8859-1" || charset === "latin1" || charset === "us-ascii") return bytes.toString("latin1");
  try {
    return new TextDecoder(charset).decode(bytes);
  } catch {
    return undefined;
  }
}
