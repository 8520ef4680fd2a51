/** A parsed Content-Type: lower-case media type and its parameters (charset, boundary …). */
export interface MediaType {
  readonly type: string;
  readonly params: Readonly<Record<string, string>>;
}

const cache = new Map<string, MediaType>();

/**
 * Parses a Content-Type header. Results are cached: the same few header values repeat on every
 * call, so the hot path never re-parses them.
 */
export function parseMediaType(header: string | undefined): MediaType | undefined {
  if (!header) return undefined;
  const hit = cache.get(header);
  if (hit) return hit;
  const parts = header.split(";");
  const type = parts[0].trim().toLowerCase();
  const params: Record<string, string> = Object.create(null);
  for (let i = 1; i < parts.length; i++) {
    const eq = parts[i].indexOf("=");
    if (eq < 0) continue;
    const k = parts[i].slice(0, eq).trim().toLowerCase();
    let v = parts[i].slice(eq + 1).trim();
    if (v.length >= 2 && v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1);
    params[k] = v;
  }
  const mt = { type, params };
  // Boundaries differ per request; only cache headers without one, and keep the cache bounded.
  if (!("boundary" in params) && cache.size < 256) cache.set(header, mt);
  return mt;
}
