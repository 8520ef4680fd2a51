import type { ClientContentType, ClientOptions, ClientProtocol } from "../client/options.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { GrpcMessageFormat } from "../protocol-grpc/content-type.js";

/** The client's `serialization` option, checked: it implies gRPC with `grpc+proto`. */
export function checkedSerialization(o: ClientOptions): { protocol: ClientProtocol; ct: ClientContentType } {
  if (!["hessian2", "fastjson2", "json"].includes(o.serialization as string)) {
    throw new TypeError(`createClient: serialization must be "hessian2", "fastjson2" or "json", got "${o.serialization}"`);
  }
  if (o.protocol !== undefined && o.protocol !== "grpc") {
    throw new TypeError(`createClient: serialization ${o.serialization} is Dubbo's wrapper over gRPC; protocol must be "grpc", got "${o.protocol}"`);
  }
  if (o.contentType !== undefined && o.contentType !== "grpc+proto") {
    throw new TypeError(`createClient: serialization ${o.serialization} is sent as grpc+proto, not "${o.contentType}"`);
  }
  return { protocol: "grpc", ct: "grpc+proto" };
}

/** The client's message format for an IDL-less method under its `serialization` option. */
export function wrapperFormat(md: MethodDescriptor, serialization: ClientOptions["serialization"]): GrpcMessageFormat | undefined {
  if (serialization === undefined || md.requestType !== undefined) return undefined;
  return serialization === "json" ? "wrapper" : serialization;
}
