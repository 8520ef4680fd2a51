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
  uploadMemoryBytes: 1024 * 1024,
  maxFormFields: 1000,
  maxXmlDepth: 64,
  maxXmlElements: 20_000,
  maxXmlAttributes: 10_000,
  maxXmlElementAttributes: 256,
  maxXmlBytes: 1024 * 1024,
};
