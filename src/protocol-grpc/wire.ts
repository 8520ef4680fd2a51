// gRPC's header-level wire rules on both sides: the content types and the message format each
// carries, and `grpc-timeout` read and written. Must not change: the content-type table is what
// grpc-js, grpcio and Dubbo Java send; a bad timeout is invalid_argument, never ignored.
import type { GrpcMessageFormat } from "../message/codec-types.js";
import { badTimeout } from "../protocol/errors.js";
import { H } from "../protocol/headers.js";

/**
 * gRPC content types and their message format. `application/grpc` and `+proto` carry protobuf
 * for .proto methods and Dubbo's TripleRequestWrapper for IDL-less ones (as Dubbo Java's client
 * sends them); `application/triple+wrapper` always carries the wrapper.
 */
const FORMATS: ReadonlyMap<string, GrpcMessageFormat> = new Map([
  ["application/grpc", "proto"],
  ["application/grpc+proto", "proto"],
  ["application/grpc+json", "json"],
  ["application/triple+wrapper", "wrapper"],
]);

/** The message format of a (lower-case, parameter-free) gRPC media type; undefined when unsupported. */
export function grpcFormatOf(mediaType: string): GrpcMessageFormat | undefined {
  return FORMATS.get(mediaType);
}

/** The gRPC media types we accept, for error messages. */
export const GRPC_MEDIA_TYPES: readonly string[] = [...FORMATS.keys()];

/**
 * True when a request's Content-Type selects gRPC (any `application/grpc…` or the Triple
 * wrapper type). A prefix check: it runs on every request before anything is parsed.
 */
export function isGrpcContentType(contentType: unknown): boolean {
  return typeof contentType === "string" && (contentType.startsWith("application/grpc") || contentType.startsWith("application/triple+wrapper"));
}

/** Milliseconds per `grpc-timeout` unit: Hours, Minutes, Seconds, milli-, micro-, nanoseconds. */
const UNITS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/**
 * Parses `grpc-timeout` into milliseconds: at most 8 ASCII digits and one unit letter
 * (`H M S m u n`), as gRPC's HTTP/2 protocol defines it. Undefined when absent or empty; a
 * malformed value is `invalid_argument`.
 */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!m) throw badTimeout(H.grpcTimeout, value);
  return Number(m[1]) * UNITS[m[2]];
}

/** The units `formatGrpcTimeout` tries, finest first, with their size in milliseconds. */
const FORMAT_UNITS: readonly [string, number][] = [
  ["u", 0.001],
  ["m", 1],
  ["S", 1000],
  ["M", 60_000],
];

/**
 * Formats milliseconds as a `grpc-timeout` value in the finest unit whose (rounded up) count fits
 * 8 digits; never shorter than the timeout, capped at 99999999M (190 years).
 */
export function formatGrpcTimeout(ms: number): string {
  if (ms <= 0) return "1n";
  for (const [unit, size] of FORMAT_UNITS) {
    const n = Math.ceil(ms / size);
    if (n <= 99_999_999) return `${n}${unit}`;
  }
  return "99999999M";
}
