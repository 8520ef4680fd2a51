/**
 * How the messages of a call are encoded, chosen by the request's content type. `json` is the
 * Dubbo form for IDL-less methods (a JSON array of the arguments, the result as plain JSON);
 * `protojson` is ProtoJSON of the derived messages, what Connect and gRPC-Web JSON clients speak.
 * Both are ProtoJSON for .proto methods. `hessian2` and `fastjson2` are Dubbo's wrapper with
 * Java's serializations, what a client with that `serialization` sends for IDL-less methods.
 */
export type GrpcMessageFormat = "proto" | "json" | "protojson" | "wrapper" | "hessian2" | "fastjson2";

/**
 * How the messages of one method travel in one format, both ways: the server decodes requests
 * and encodes responses, the client encodes requests and decodes responses. One object per
 * method and format, built on first use and shared by every call. The client's Triple HTTP
 * unary bodies (`application/json`, `application/proto`) are single messages of the same
 * formats, so it uses these codecs too.
 */
export interface MessageCodec {
  /** Server: one request message → the method's bound arguments (request streams: one element). */
  decodeRequest(bytes: Uint8Array): unknown[];
  /** Server: one response message. */
  encodeResponse(value: unknown): Buffer;
  /** Server: one response message as text, where the format is text (JSON) and a bare body can take a string. */
  encodeResponseText?(value: unknown): string;
  /** Server: one response message as a whole uncompressed frame, where that saves a copy. */
  encodeResponseFrame?(value: unknown): Buffer;
  /** Client: the arguments of a unary or server-streaming call as one request message. */
  encodeArgs(args: readonly unknown[]): Uint8Array;
  /** Client: one message of a request stream. */
  encodeRequest(value: unknown): Uint8Array;
  /**
   * Client: one response message. `javaException`: the response headers carried Dubbo's
   * `tri-exception-code` (not 0), so the message is a serialized Java exception (Dubbo's wrapper).
   */
  decodeResponse(bytes: Uint8Array, javaException?: boolean): unknown;
  /**
   * Server: the codec for the rest of a call, chosen by its first request message (plain
   * protobuf or Dubbo's wrapper for IDL-less methods). Absent: this codec serves every call.
   */
  forRequest?(first: Uint8Array): MessageCodec;
}
