/**
 * The server's size limits and upload settings: the public `limits` and `uploads` groups, their
 * defaults, and the one resolved {@link Limits} object every decoder reads. Checked by the one
 * option checker (runtime/options-check.ts); a new limit needs a default, a rule and docs.
 */
import { DEFAULT_MAX_NUMBER_DIGITS, MIN_NUMBER_DIGITS } from "../codec/big-numbers.js";
import type { BodyLimits } from "../codec/codec.js";
import { bytes, check, checkGroup, count, type Rule } from "./options-check.js";

/** Size limits (createServer's `limits`), as resolved: every decoder reads these. */
export interface Limits extends BodyLimits {
  /** Most request header fields → 431. */
  readonly maxHeaderCount: number;
  /** Largest total request header size, bytes (HTTP/1.1 → 431; HTTP/2 max header list size). */
  readonly maxHeaderBytes: number;
  /** Largest gRPC message received, after decompression → resource_exhausted. */
  readonly maxMessageBytes: number;
}

/** The upload keys of {@link Limits}: given in the `uploads` group, not in `limits`. */
type UploadKeys = "maxUploadFileBytes" | "maxUploadBytes" | "maxUploadDiskBytes" | "maxUploadDiskBytesPerPeer" | "uploadMemoryBytes";

/** createServer's `limits`: each left out (or `undefined`) keeps its default. */
export type LimitOptions = Partial<Omit<Limits, UploadKeys>>;

/** createServer's `uploads`: where and how much of streamed uploads (`StreamedFile` parameters). */
export interface UploadOptions {
  /**
   * Directory where streamed uploads larger than `memoryBytes` are spilled, as mode-0600 files
   * with unguessable names, deleted when their call ends. Created (mode 0700) if missing; one
   * owned by another user or writable by others is refused. Default: a private `mkdtemp`
   * directory in `os.tmpdir()`, removed when the server closes.
   */
  dir?: string;
  /** A streamed file up to this size stays in memory; a larger one is spilled to `dir`. Default 1 MiB. */
  memoryBytes?: number;
  /** Largest streamed file, independent of `limits.maxBodyBytes`. Default 100 MiB. */
  maxFileBytes?: number;
  /** Most bytes of streamed files in one request. Default 1 GiB. */
  maxBytes?: number;
  /** Most bytes of spilled uploads on disk at once, server-wide (507 past it). Default 8 GiB. */
  maxDiskBytes?: number;
  /** Most bytes of spilled uploads on disk at once for one client address. Default a quarter of `maxDiskBytes`. */
  maxDiskBytesPerPeer?: number;
}

export const DEFAULT_LIMITS: Required<LimitOptions> = {
  maxBodyBytes: 4 * 1024 * 1024,
  maxMessageBytes: 4 * 1024 * 1024,
  maxHeaderCount: 100,
  maxHeaderBytes: 16 * 1024,
  maxParts: 64,
  maxFileBytes: 4 * 1024 * 1024,
  maxFieldBytes: 1024 * 1024,
  maxFiles: 32,
  maxFields: 64,
  maxPartHeaderBytes: 16 * 1024,
  maxFormFields: 1000,
  maxXmlDepth: 64,
  maxXmlElements: 20_000,
  maxXmlAttributes: 10_000,
  maxXmlElementAttributes: 256,
  maxXmlBytes: 1024 * 1024,
  maxNumberDigits: DEFAULT_MAX_NUMBER_DIGITS,
};

export const DEFAULT_UPLOADS: Required<Omit<UploadOptions, "dir" | "maxDiskBytesPerPeer">> = {
  memoryBytes: 1024 * 1024,
  maxFileBytes: 100 * 1024 * 1024,
  maxBytes: 1024 * 1024 * 1024,
  maxDiskBytes: 8 * 1024 * 1024 * 1024,
};

/** Each upload option → its field of {@link Limits}. */
const UPLOAD_FIELDS: Readonly<Record<Exclude<keyof UploadOptions, "dir">, UploadKeys>> = {
  memoryBytes: "uploadMemoryBytes",
  maxFileBytes: "maxUploadFileBytes",
  maxBytes: "maxUploadBytes",
  maxDiskBytes: "maxUploadDiskBytes",
  maxDiskBytesPerPeer: "maxUploadDiskBytesPerPeer",
};

/** The limits moved to `uploads` in 0.x, and the top-level options moved into `limits` / `uploads`. */
const MOVED_LIMITS: Readonly<Record<string, string>> = {
  uploadMemoryBytes: "uploads.memoryBytes",
  maxUploadFileBytes: "uploads.maxFileBytes",
  maxUploadBytes: "uploads.maxBytes",
  maxUploadDiskBytes: "uploads.maxDiskBytes",
  maxUploadDiskBytesPerPeer: "uploads.maxDiskBytesPerPeer",
};

const DIGITS: Rule = {
  must: `a whole number >= ${MIN_NUMBER_DIGITS} (a Java long's digits; Infinity for no limit)`,
  ok: (v) => v === Infinity || (Number.isInteger(v) && (v as number) >= MIN_NUMBER_DIGITS),
};
/** node:http and nghttp2 take a finite header size. */
const HEADER_BYTES: Rule = {
  must: "a whole number of bytes from 1 to 2147483647",
  ok: (v) => Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 2 ** 31 - 1,
};

/** The rule of a limit: a byte size, or a count (both lifted by `Infinity`). */
function limitRule(name: string): Rule {
  if (name === "maxNumberDigits") return DIGITS;
  if (name === "maxHeaderBytes") return HEADER_BYTES;
  return name.endsWith("Bytes") ? bytes : count(0, Number.MAX_SAFE_INTEGER, true);
}

/**
 * The limits a server applies: the defaults with `limits` and `uploads` over them. One given as
 * `undefined` keeps its default, so `{ maxBodyBytes: env ? Number(env) : undefined }` never
 * turns a limit off; a bad value or an unknown name is a TypeError naming its full path.
 */
export function checkedLimits(limits: LimitOptions | undefined, uploads: UploadOptions | undefined, who: string): Limits {
  const out: Record<string, number> = { ...DEFAULT_LIMITS };
  for (const [k, v] of Object.entries(DEFAULT_UPLOADS)) out[UPLOAD_FIELDS[k as keyof typeof UPLOAD_FIELDS]] = v;
  const given = checkGroup(who, "limits", limits, Object.keys(DEFAULT_LIMITS), MOVED_LIMITS) ?? {};
  for (const [name, v] of Object.entries(given)) {
    if (v !== undefined) out[name] = check(who, `limits.${name}`, v as number, limitRule(name)) as number;
  }
  const up = checkGroup(who, "uploads", uploads, ["dir", ...Object.keys(UPLOAD_FIELDS)]) ?? {};
  for (const [name, field] of Object.entries(UPLOAD_FIELDS)) {
    const v = up[name as keyof UploadOptions];
    if (v !== undefined) out[field] = check(who, `uploads.${name}`, v as number, bytes) as number;
  }
  // One client address may hold a quarter of the upload disk unless told otherwise.
  if (up.maxDiskBytesPerPeer === undefined) out.maxUploadDiskBytesPerPeer = Math.floor(out.maxUploadDiskBytes / 4);
  return out as unknown as Limits;
}
