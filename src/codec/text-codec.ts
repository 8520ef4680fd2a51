// Owns `textRequestCodec`. `text/plain`: the body is the one (string) argument, in the request's
// charset (UTF-8 by default). Must not change: limits are checked before memory is spent; bad input
// is a 4xx naming the problem.
import type { MethodDescriptor } from "../service/descriptors.js";
import { bindError } from "./bind-error.js";
import { withNumberLimits } from "./big-numbers.js";
import { compileTextConverter, paramLabel } from "./binder.js";
import { checkCharset, decodeText } from "./charset.js";
import type { RequestCodec } from "./codec.js";
import { requireIdlLess } from "./idl-guard.js";

type TextBinder = (body: Buffer, charset: string) => unknown[];

const binders = new WeakMap<MethodDescriptor, TextBinder>();

function compileTextBinder(method: MethodDescriptor): TextBinder {
  const n = method.params.length;
  if (n === 0) {
    return (body) => {
      if (body.length === 0) return [];
      throw bindError(`${method.path} takes no arguments, but the text/plain body is not empty`);
    };
  }
  if (n > 1 && !method.params.slice(1).every((p) => p.optional)) {
    return () => {
      throw bindError(`a text/plain body carries one argument, but ${method.path} takes ${n}; send a JSON array instead`);
    };
  }
  const p = method.params[0];
  // A byte-array parameter takes the body as sent; anything else gets the decoded text.
  const conv = compileTextConverter(p.type);
  const label = paramLabel(p, 0);
  const one: TextBinder = p.type.kind === "bytes" ? (body) => [body] : (body, charset) => [conv(decodeText(body, charset), label)];
  if (n === 1) return one;
  // The other parameters are optional: they bind `undefined`.
  return (body, charset) => {
    const args = one(body, charset);
    args.length = n;
    return args;
  };
}

/** The compiled text binder of a method (cached: built on its first text/plain call). */
function textBinder(method: MethodDescriptor): TextBinder {
  let bind = binders.get(method);
  if (!bind) {
    bind = compileTextBinder(method);
    binders.set(method, bind);
  }
  return bind;
}

/** `text/plain`: the body is the one (string) argument, in the request's charset (UTF-8 by default). */
export const textRequestCodec: RequestCodec = {
  mediaTypes: ["text/plain"],
  responseMediaType: "application/json",
  decode(method, body, mediaType, limits) {
    requireIdlLess(method, mediaType.type);
    const charset = checkCharset(mediaType.params.charset);
    const bind = textBinder(method);
    return withNumberLimits(limits, () => bind(body, charset));
  },
};
