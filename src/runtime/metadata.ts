// Owns `Metadata`, `OutgoingMetadata`. Request metadata: a read-only view over the request headers,
// without copying them. Names are lower-case; `-bin` values decode from base64 (padded or not).
// Must not change: the rules every protocol relies on (docs/architecture.md).
import { RESERVED_HEADERS } from "../protocol/headers.js";

type RawHeaders = Readonly<Record<string, string | string[] | undefined>>;

function decodeBase64(v: string): Buffer {
  // Buffer accepts padded and unpadded, standard and URL-safe base64 alike.
  return Buffer.from(v, "base64");
}

/**
 * Request metadata: a read-only view over the request headers, without copying them. Names are
 * lower-case; `-bin` values decode from base64 (padded or not).
 */
export class Metadata {
  constructor(private readonly raw: RawHeaders) {}

  /** The first value of a header, or undefined. */
  get(name: string): string | undefined {
    const v = this.raw[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  }

  /** All values of a header. */
  getAll(name: string): string[] {
    const v = this.raw[name.toLowerCase()];
    return v === undefined ? [] : Array.isArray(v) ? v : [v];
  }

  /** A `-bin` header's decoded bytes. */
  getBinary(name: string): Buffer | undefined {
    const v = this.get(name);
    return v === undefined ? undefined : decodeBase64(v);
  }

  has(name: string): boolean {
    return this.raw[name.toLowerCase()] !== undefined;
  }

  /** Custom metadata only: pseudo-headers and protocol headers left out. */
  *entries(): IterableIterator<[string, string]> {
    for (const [k, v] of Object.entries(this.raw)) {
      if (v === undefined || k.startsWith(":") || RESERVED_HEADERS.has(k)) continue;
      if (Array.isArray(v)) for (const x of v) yield [k, x];
      else yield [k, v];
    }
  }

  /** Custom metadata as a plain object. */
  toObject(): Record<string, string | string[]> {
    const out: Record<string, string | string[]> = {};
    for (const [k, v] of this.entries()) {
      const prev = out[k];
      out[k] = prev === undefined ? v : Array.isArray(prev) ? [...prev, v] : [prev, v];
    }
    return out;
  }

  /** The raw header object (lower-case names), including protocol headers. */
  get headers(): RawHeaders {
    return this.raw;
  }
}

/** Response headers or trailers a handler sets; `-bin` names take bytes and are sent base64. */
export class OutgoingMetadata {
  private map: Record<string, string | string[]> | undefined;

  set(name: string, value: string | number | Uint8Array | readonly string[]): this {
    const k = name.toLowerCase();
    if (k.startsWith(":") || RESERVED_HEADERS.has(k)) throw new TypeError(`cannot set reserved header ${k}`);
    this.map ??= {};
    this.map[k] =
      value instanceof Uint8Array
        ? Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64")
        : typeof value === "number"
          ? String(value)
          : (value as string | string[]);
    return this;
  }

  append(name: string, value: string): this {
    const k = name.toLowerCase();
    const prev = this.map?.[k];
    if (prev === undefined) return this.set(k, value);
    this.map![k] = Array.isArray(prev) ? [...prev, value] : [prev, value];
    return this;
  }

  get(name: string): string | string[] | undefined {
    return this.map?.[name.toLowerCase()];
  }

  delete(name: string): void {
    if (this.map) delete this.map[name.toLowerCase()];
  }

  get empty(): boolean {
    return this.map === undefined;
  }

  /** Copies the entries into an outgoing header object, their names prefixed with `prefix`. */
  copyTo(target: Record<string, unknown>, prefix = ""): void {
    if (this.map) for (const k in this.map) target[prefix + k] = this.map[k];
  }
}
