// Owns `javaResultCodec`: the JSON codec of a method whose results use Java value classes or
// uploads, loaded by wire.ts's dynamic import for such a method only. Must not change: the
// converter extras are registered before the codec is built (its results are checked exactly as
// the Node client checks them); no node: import (it runs in browsers).
import { converterExtras } from "../codec/converter-extras.js";
import { useConverterExtras } from "../codec/converters.js";
import { type JsonClientCodec, jsonClientCodec } from "../codec/json-message.js";
import type { MethodDescriptor } from "../service/descriptors.js";

/**
 * The method's JSON codec with the Java value-class and upload converters registered. It lives
 * in the lazily loaded module that brings those converters (rather than in wire.ts) so that this
 * chunk and the Connect, gRPC-Web and protobuf ones share the same modules of the page: a bundler
 * then puts those in one chunk instead of two.
 */
export function javaResultCodec(md: MethodDescriptor): JsonClientCodec {
  useConverterExtras(converterExtras);
  return jsonClientCodec(md);
}
