// Owns `tripleProtoRequestCodec`, `tripleProtoResponseCodec`. `application/proto` bodies for every
// method over Triple HTTP: a `.proto` method's own messages, and for an IDL-less method the
// messages of its derived schema (what … Must not change: Triple's wire rules as Dubbo Java speaks
// them (tri-* headers, the HTTP unary and stream forms).
import { decodeError } from "../codec/bind-error.js";
import { withNumberLimits } from "../codec/big-numbers.js";
import type { BodyLimits, RequestCodec, ResponseCodec } from "../codec/codec.js";
import { decodeProtoMessage, encodeProtoMessage, protoRequestCodec } from "../codec/proto-codec.js";
import { Code } from "../protocol/code.js";
import type { MediaType } from "../protocol/content-type.js";
import { RpcError } from "../protocol/rpc-error.js";
import { messageCodec } from "../message/message-codec.js";
import type { MethodDescriptor } from "../service/descriptors.js";

/**
 * `application/proto` bodies for every method over Triple HTTP: a `.proto` method's own
 * messages, and for an IDL-less method the messages of its derived schema (what `toProto`
 * exports and reflection serves), so a client generated from the exported `.proto` can call it
 * with protobuf as well as JSON. A body that does not decode is the caller's mistake: 400.
 */
function decode(md: MethodDescriptor, body: Buffer, _mediaType: MediaType, limits: BodyLimits): unknown[] {
  if (md.requestType) return [decodeProtoMessage(md, body)];
  try {
    return withNumberLimits(limits, () => messageCodec(md, "proto").decodeRequest(body));
  } catch (e) {
    if (e instanceof RpcError && e.code === Code.Internal) {
      throw decodeError(e.message, e);
    }
    throw e;
  }
}

export const tripleProtoRequestCodec: RequestCodec = {
  mediaTypes: protoRequestCodec.mediaTypes,
  responseMediaType: "application/proto",
  decode,
};

export const tripleProtoResponseCodec: ResponseCodec = {
  mediaType: "application/proto",
  encode: (md, value) => (md.responseType ? encodeProtoMessage(md, value) : (messageCodec(md, "proto").encodeResponse(value) as Buffer)),
};
