/**
 * The codec table of HTTP unary bodies: which codec reads each request media type and writes
 * each response media type (not the service registry: that is src/registry/). Adding a body
 * type means a codec file and one line here.
 */
import type { RequestCodec, ResponseCodec } from "./codec.js";
import { jsonRequestCodec, jsonResponseCodec } from "./json-codec.js";
import { formRequestCodec } from "./form-codec.js";
import { multipartRequestCodec } from "./multipart-codec.js";
import { protoRequestCodec, protoResponseCodec } from "./proto-codec.js";
import { textRequestCodec } from "./text-codec.js";
import { textXmlResponseCodec, xmlRequestCodec, xmlResponseCodec } from "./xml-codec.js";

/**
 * The content-type table of HTTP unary calls: one entry per request media type, one per
 * response media type. Adding a body type means adding a codec file and one line here.
 */
const REQUEST_CODECS: readonly RequestCodec[] = [
  jsonRequestCodec,
  protoRequestCodec,
  formRequestCodec,
  multipartRequestCodec,
  textRequestCodec,
  xmlRequestCodec,
];
const RESPONSE_CODECS: readonly ResponseCodec[] = [jsonResponseCodec, protoResponseCodec, xmlResponseCodec, textXmlResponseCodec];

const requestByType = new Map<string, RequestCodec>();
for (const c of REQUEST_CODECS) for (const t of c.mediaTypes) requestByType.set(t, c);
const responseByType = new Map<string, ResponseCodec>();
for (const c of RESPONSE_CODECS) responseByType.set(c.mediaType, c);
responseByType.set("text/json", jsonResponseCodec);
responseByType.set("application/x-protobuf", protoResponseCodec);
responseByType.set("application/protobuf", protoResponseCodec);

/** The request codec for a media type, if we read it. */
export function requestCodecFor(mediaType: string): RequestCodec | undefined {
  return requestByType.get(mediaType);
}

/** The response codec for a media type, if we write it. */
export function responseCodecFor(mediaType: string): ResponseCodec | undefined {
  return responseByType.get(mediaType);
}

/** Media types we read, for 415 messages and `Accept-Post`. */
export function supportedRequestTypes(): string[] {
  return [...requestByType.keys()];
}
