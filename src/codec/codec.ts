// Owns `BodyLimits`, `RequestCodec`, `ResponseCodec`. Limits a streaming body decoder enforces
// while it reads. Must not change: limits are checked before memory is spent; bad input is a 4xx
// naming the problem.
import type { Readable } from "node:stream";
import type { MediaType } from "../protocol/content-type.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { UploadScope } from "./upload-store.js";

/** Limits a streaming body decoder enforces while it reads. */
export interface BodyLimits {
  /** Largest body, after decompression. */
  readonly maxBodyBytes: number;
  /** Most multipart parts. */
  readonly maxParts: number;
  /** Largest multipart file. */
  readonly maxFileBytes: number;
  /** Largest multipart field or form value. */
  readonly maxFieldBytes: number;
  /** Most multipart file parts (byte arrays, `InMemoryFile`, `StreamedFile`, parts with a filename). */
  readonly maxFiles: number;
  /** Most multipart non-file parts (fields). */
  readonly maxFields: number;
  /** Largest header block of one multipart part. */
  readonly maxPartHeaderBytes: number;
  /** Largest streamed file (`StreamedFile`), independent of `maxBodyBytes`. */
  readonly maxUploadFileBytes: number;
  /** Most bytes of streamed files (`StreamedFile`) in one request. */
  readonly maxUploadBytes: number;
  /** Most bytes of spilled uploads on disk at once, server-wide (507 past it). */
  readonly maxUploadDiskBytes: number;
  /** Most bytes of spilled uploads on disk at once for one client address (507 past it). */
  readonly maxUploadDiskBytesPerPeer: number;
  /** A streamed file up to this size stays in memory; a larger one is spilled to a temp file. */
  readonly uploadMemoryBytes: number;
  /** Most fields of a url-encoded form. */
  readonly maxFormFields: number;
  /** Deepest XML nesting. */
  readonly maxXmlDepth: number;
  /** Most elements of an XML document. */
  readonly maxXmlElements: number;
  /** Most attributes of an XML document. */
  readonly maxXmlAttributes: number;
  /** Most attributes of one XML element. */
  readonly maxXmlElementAttributes: number;
  /**
   * Largest XML document handed to the XML parser, bytes (UTF-8, after decompression). XML costs
   * 20–50× JSON per byte to parse (bench/parsers.mjs), so it has a byte limit of its own below
   * `maxBodyBytes`.
   */
  readonly maxXmlBytes: number;
  /**
   * Most decimal digits of one number converted from text (a bigint or number parameter from a
   * JSON string, a query value, a form field, a text part or body, XML text) or from a Java big
   * number (hessian2 and JSONB `BigInteger` and `BigDecimal`, measured in bits: digits × log2 10),
   * counted before any conversion: converting decimal text to a `bigint` costs more than linear time.
   */
  readonly maxNumberDigits: number;
}

/**
 * Decodes a unary request body of one media type into a method's bound arguments, in order.
 * A codec either decodes a complete buffer (`decode`) or reads the (already decompressed) body
 * stream itself (`decodeStream`), which multipart uses to stream uploads with limits.
 */
export interface RequestCodec {
  /** Lower-case media types this codec reads. */
  readonly mediaTypes: readonly string[];
  /** Response media type when the request does not ask for another; undefined: the request's own. */
  readonly responseMediaType?: string;
  decode?(method: MethodDescriptor, body: Buffer, mediaType: MediaType, limits: BodyLimits): unknown[];
  /**
   * Reads the body stream itself. `uploads` owns the call's spilled files (the caller releases
   * it when the call ends); without it, streamed files are refused.
   */
  decodeStream?(method: MethodDescriptor, body: Readable, mediaType: MediaType, limits: BodyLimits, uploads?: UploadScope): Promise<unknown[]>;
  /** True when `decodeStream` streams files for `method` (it then needs an `uploads` scope). */
  streamsFiles?(method: MethodDescriptor): boolean;
  /** The most body bytes `decodeStream` may read for `method` (default `limits.maxBodyBytes`). */
  bodyLimit?(method: MethodDescriptor, limits: BodyLimits): number;
}

/** Encodes a unary result in one media type. */
export interface ResponseCodec {
  readonly mediaType: string;
  encode(method: MethodDescriptor, value: unknown): Buffer | string;
}
