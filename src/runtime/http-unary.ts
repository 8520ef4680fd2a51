// Owns `HttpUnaryMethod`. A unary method whose call is one HTTP exchange with whole bodies each way
// (Triple HTTP, Connect unary, gRPC-Web unary), over HTTP/1.1 or HTTP/2 as the client's
// `httpVersion` says. Must not change: the rules every protocol relies on (docs/architecture.md).
import type { OutgoingHttpHeaders } from "node:http";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { CallScope } from "../transport/client/call-scope.js";
import type { HttpReply } from "../transport/client/unary-transport.js";
import type { CallOptions } from "./call-options.js";
import { MethodHeaders, type StreamCall, type WireMethod, type WireSettings } from "./client-protocol.js";
import type { Attempt } from "./invocation.js";

/**
 * A unary method whose call is one HTTP exchange with whole bodies each way (Triple HTTP,
 * Connect unary, gRPC-Web unary), over HTTP/1.1 or HTTP/2 as the client's `httpVersion` says.
 * A protocol supplies how arguments become a body and how a reply becomes a result.
 */
export abstract class HttpUnaryMethod implements WireMethod {
  private readonly attemptHeaders: MethodHeaders;

  constructor(
    readonly protocol: string,
    readonly md: MethodDescriptor,
    readonly headers: OutgoingHttpHeaders,
    protected readonly settings: WireSettings,
    timeoutHeader: string,
    formatTimeout: (ms: number) => string,
  ) {
    // HTTP/2 requests carry their pseudo-headers; prepared once, the transport sends them as they are.
    const prepared = settings.httpVersion === "1.1" ? headers : { ...headers, ":method": "POST", ":path": md.path };
    this.attemptHeaders = new MethodHeaders(headers, prepared, timeoutHeader, formatTimeout);
  }

  /** The request body of a call, and its headers when the body changes them (e.g. compressed). */
  protected abstract body(args: readonly unknown[], headers: OutgoingHttpHeaders): { body: Uint8Array; headers: OutgoingHttpHeaders };

  /** The call's result from a complete reply, or the error the reply describes (thrown). */
  protected abstract read(reply: HttpReply, options: CallOptions | undefined): unknown;

  abstract encodeArgs(args: readonly unknown[]): Uint8Array;

  unary(args: readonly unknown[], callHeaders: OutgoingHttpHeaders, scope: CallScope, opts: CallOptions | undefined): Attempt<unknown> {
    const { body, headers } = this.body(args, callHeaders);
    const transport = this.settings.unary();
    const path = this.md.path;
    const maxBytes = this.settings.maxBytes;
    return (p) =>
      transport
        .post(p, { path, headers: this.attemptHeaders.of(headers, scope), body, signal: scope.signal, maxBytes })
        .then((reply) => this.read(reply, opts));
  }

  open(): Promise<StreamCall> {
    return Promise.reject(new RpcError(Code.Internal, `${this.md.path} is unary: it has no stream to open`));
  }
}
