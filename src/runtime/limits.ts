import { DEFAULT_MAX_NUMBER_DIGITS, MIN_NUMBER_DIGITS } from "../codec/big-numbers.js";
import type { BodyLimits } from "../codec/codec.js";

/** Size limits; every one is a server option (`limits`), and the defaults are below. */
export interface Limits extends BodyLimits {
  /** Most request header fields → 431. */
  readonly maxHeaderCount: number;
  /** Largest gRPC message received, after decompression → resource_exhausted. */
  readonly maxMessageBytes: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxMessageBytes: 4 * 1024 * 1024,
  maxHeaderCount: 100,
  maxParts: 64,
  maxFileBytes: 4 * 1024 * 1024,
  maxFieldBytes: 1024 * 1024,
  maxFiles: 32,
  maxFields: 64,
  maxPartHeaderBytes: 16 * 1024,
  maxUploadFileBytes: 100 * 1024 * 1024,
  maxUploadBytes: 1024 * 1024 * 1024,
  maxUploadDiskBytes: 8 * 1024 * 1024 * 1024,
  /** Unless given: a quarter of `maxUploadDiskBytes` (see {@link checkedLimits}). */
  maxUploadDiskBytesPerPeer: 2 * 1024 * 1024 * 1024,
  uploadMemoryBytes: 1024 * 1024,
  maxFormFields: 1000,
  maxXmlDepth: 64,
  maxXmlElements: 20_000,
  maxXmlAttributes: 10_000,
  maxXmlElementAttributes: 256,
  maxXmlBytes: 1024 * 1024,
  maxNumberDigits: DEFAULT_MAX_NUMBER_DIGITS,
};

/**
 * The limits a server applies: the defaults with `given` over them. A limit given as `undefined`
 * keeps its default, so `{ maxBodyBytes: env ? Number(env) : undefined }` never turns a limit
 * off; any other value must be a number >= 0 (`Infinity` lifts the limit), and a name that is
 * not a limit is refused: a `TypeError` naming it, at `createServer`.
 */
export function checkedLimits(given: Partial<Limits> | undefined, where: string): Limits {
  const out: Record<string, number> = { ...DEFAULT_LIMITS };
  if (given === undefined) return out as unknown as Limits;
  if (typeof given !== "object" || given === null || Array.isArray(given)) {
    throw new TypeError(`${where}: limits must be an object such as { maxBodyBytes: 1048576 }, got ${String(given)}`);
  }
  for (const [name, v] of Object.entries(given)) {
    if (!Object.hasOwn(DEFAULT_LIMITS, name)) {
      throw new TypeError(`${where}: limits.${name} is not a limit; the limits are ${Object.keys(DEFAULT_LIMITS).join(", ")}`);
    }
    if (v === undefined) continue;
    if (typeof v !== "number" || Number.isNaN(v) || v < 0) {
      throw new TypeError(`${where}: limits.${name} must be a number >= 0 (Infinity for no limit), got ${typeof v === "string" ? JSON.stringify(v) : String(v)}`);
    }
    if (name === "maxNumberDigits" && v < MIN_NUMBER_DIGITS) {
      throw new TypeError(`${where}: limits.maxNumberDigits must be at least ${MIN_NUMBER_DIGITS} (a Java long's digits), got ${v}`);
    }
    out[name] = v;
  }
  // One client address may hold a quarter of the upload disk unless told otherwise.
  if (given.maxUploadDiskBytesPerPeer === undefined) out.maxUploadDiskBytesPerPeer = Math.floor(out.maxUploadDiskBytes / 4);
  return out as unknown as Limits;
}
