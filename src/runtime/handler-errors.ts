// Owns `HandlerErrors`. Turns what a handler (or an interceptor) threw into the RpcError its caller
// gets, for every protocol: `invokeHandler` and `ResponsePump` call it. Must not change: the rules
// every protocol relies on (docs/architecture.md).
import { randomBytes } from "node:crypto";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { boundMessage } from "../protocol/wire-text.js";
import type { CallContext } from "./context.js";
import type { Logger } from "./logger.js";

/** How much of an error's message a log line quotes, in UTF-8 bytes. */
const LOGGED_MESSAGE_BYTES = 4096;

/**
 * Turns what a handler (or an interceptor) threw into the RpcError its caller gets, for every
 * protocol: `invokeHandler` and `ResponsePump` call it. An RpcError is the handler's answer and
 * passes as it is. Anything else is a bug: it is logged with its stack and the call's service,
 * method and peer, and becomes `unknown` with the error's message, or, with
 * `maskUnexpectedErrors`, with `internal error (id <id>)`, the id being in the log line too.
 * The log line quotes at most 4 KiB of the message (a handler may echo a whole request in it),
 * and the message of the error's `cause` when it has one (`Download.file` keeps the file's path
 * there, out of the message the caller gets).
 */
export class HandlerErrors {
  constructor(
    private readonly logger: Logger,
    private readonly mask: boolean,
  ) {}

  toRpcError(reason: unknown, ctx: CallContext): RpcError {
    if (reason instanceof RpcError) return reason;
    const converted = RpcError.from(reason);
    // An AbortError (cancelled) is how a handler passes its signal's abort on, not a bug.
    if (converted.code !== Code.Unknown) return converted;
    const md = ctx.method;
    const errorId = randomBytes(4).toString("hex");
    const err = reason instanceof Error ? reason : new Error(String(reason));
    this.logger.error(
      {
        err,
        stack: err.stack,
        service: md.serviceName,
        method: md.name,
        peer: `${ctx.peer.address}:${ctx.peer.port}`,
        protocol: ctx.protocol,
        errorId,
        ...(err.cause instanceof Error ? { cause: boundMessage(err.cause.message, LOGGED_MESSAGE_BYTES) } : {}),
      },
      `${md.serviceName}/${md.name} failed: ${err.name}: ${boundMessage(err.message, LOGGED_MESSAGE_BYTES)}`,
    );
    if (!this.mask) return converted;
    return new RpcError(Code.Unknown, `internal error (id ${errorId})`, { cause: reason });
  }
}
