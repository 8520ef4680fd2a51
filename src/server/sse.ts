import type { ResponseCodec } from "../codec/codec.js";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { Exchange } from "../transport/exchange.js";
import type { CallContext } from "./context.js";
import { sendHttpError } from "./error-response.js";
import type { RegisteredMethod } from "./router.js";

/**
 * Serves a server-streaming method over plain HTTP as Server-Sent Events (decisions.md).
 * Placeholder until the streaming work lands: answers 501.
 */
export function serveServerStreamAsSse(
  ex: Exchange,
  route: RegisteredMethod,
  _ctx: CallContext,
  _args: unknown[],
  _codec: ResponseCodec,
  untrack: () => void,
  _timeoutMs: number | undefined,
): void {
  untrack();
  sendHttpError(
    ex,
    new RpcError(Code.Unimplemented, `${route.descriptor.path} is server-streaming: use gRPC`, { httpStatus: 501 }),
  );
}
