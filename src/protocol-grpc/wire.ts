/**
 * How the messages of a call are encoded, chosen by the request's content type. `json` is the
 * Dubbo form for IDL-less methods (a JSON array of the arguments, the result as plain JSON);
 * `protojson` is ProtoJSON of the derived messages, what Connect and gRPC-Web JSON clients speak.
 * Both are ProtoJSON for .proto methods. `hessian2` and `fastjson2` are Dubbo's wrapper with
 * Java's serializations, what a client with that `serialization` sends for IDL-less methods.
 */
export type GrpcMessageFormat = "proto" | "json" | "protojson" | "wrapper" | "hessian2" | "fastjson2";

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
