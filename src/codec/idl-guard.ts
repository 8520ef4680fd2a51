// Owns `requireIdlLess`. Form, multipart, text and XML bodies bind to decorated parameters. Must
// not change: limits are checked before memory is spent; bad input is a 4xx naming the problem.
import type { MethodDescriptor } from "../service/descriptors.js";
import { unsupportedMediaType } from "./bind-error.js";

/**
 * Form, multipart, text and XML bodies bind to decorated parameters; a method bound to a .proto
 * takes one protobuf message, which these bodies cannot describe, so they are refused with 415.
 */
export function requireIdlLess(method: MethodDescriptor, mediaType: string): void {
  if (method.requestType) {
    throw unsupportedMediaType(
      `${method.path} takes a ${method.requestType.fullName.slice(1)} message, so ${mediaType} cannot carry it; use application/json or application/proto`,
    );
  }
}
