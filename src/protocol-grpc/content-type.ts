/** How the messages of a gRPC call are encoded, chosen by the request's content type. */
export type GrpcMessageFormat = "proto" | "json" | "wrapper";

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
  return (
    typeof contentType === "string" &&
    (contentType.startsWith("application/grpc") || contentType.startsWith("application/triple+wrapper"))
  );
}
