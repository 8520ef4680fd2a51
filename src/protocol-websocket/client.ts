// Owns `websocketClient`. Triple over WebSocket, the client half (`protocol: "websocket"`): each
// call opens a WebSocket to the method's path (HTTP/1.1 upgrade … Must not change: the framing the
// web client and the server agree on; bounds on every frame.
import type { OutgoingHttpHeaders } from "node:http";
import { H } from "../protocol/headers.js";
import type { MessageCodec } from "../message/codec-types.js";
import { messageCodec } from "../message/message-codec.js";
import type { CallOptions } from "../runtime/call-options.js";
import {
  MethodHeaders,
  type ProtocolClient,
  type ProtocolSession,
  type ResponseMode,
  type WireMethod,
  type WireOptions,
  type WireSettings,
} from "../runtime/client-protocol.js";
import type { Attempt } from "../runtime/invocation.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { CallScope } from "../transport/client/call-scope.js";
import type { Provider } from "../transport/client/provider.js";
import { WebSocketClientCall } from "./client-call.js";

/** The `contentType` option → the message format and the `content-type` header of the handshake. */
const CONTENT_TYPES: Readonly<Record<string, { format: "json" | "proto"; mediaType: string }>> = {
  json: { format: "json", mediaType: "application/json" },
  proto: { format: "proto", mediaType: "application/proto" },
};

/** A method prepared for Triple over WebSocket: every call, unary included, on a WebSocket of its own. */
class WebSocketMethod implements WireMethod {
  readonly protocol = "triple-websocket";
  private readonly methodHeaders: MethodHeaders;

  constructor(
    private readonly md: MethodDescriptor,
    private readonly codec: MessageCodec,
    readonly headers: OutgoingHttpHeaders,
    private readonly settings: WireSettings,
  ) {
    this.methodHeaders = new MethodHeaders(headers, headers, H.triServiceTimeout, (ms) => String(Math.max(1, Math.ceil(ms))));
  }

  encodeArgs(args: readonly unknown[]): Uint8Array {
    return this.codec.encodeArgs(args);
  }

  open(p: Provider, headers: OutgoingHttpHeaders, scope: CallScope, _opts: CallOptions | undefined, mode: ResponseMode): Promise<WebSocketClientCall> {
    const settings = { codec: this.codec, maxBytes: this.settings.maxBytes, signal: scope.signal, tls: this.settings.tls, end: this.settings.websocketEnd };
    const callHeaders = this.methodHeaders.of(headers, scope);
    if (this.settings.httpVersion !== "2") return WebSocketClientCall.open(p, this.md.path, callHeaders, settings, mode);
    // RFC 8441 on the pooled HTTP/2 session; a server that does not advertise it gets the HTTP/1.1 upgrade.
    return WebSocketClientCall.openOverHttp2(this.settings.http2(), p, this.md.path, callHeaders, settings, mode).then(
      (call) => call ?? WebSocketClientCall.open(p, this.md.path, callHeaders, settings, mode),
    );
  }

  unary(args: readonly unknown[], headers: OutgoingHttpHeaders, scope: CallScope, opts: CallOptions | undefined): Attempt<unknown> {
    const body = this.codec.encodeArgs(args);
    return (p) =>
      this.open(p, headers, scope, opts, "single").then((call) => {
        call.sendArgs(body);
        return call.result();
      });
  }
}

class WebSocketSession implements ProtocolSession {
  constructor(private readonly settings: WireSettings) {}

  prepare(md: MethodDescriptor, base: OutgoingHttpHeaders): WebSocketMethod {
    const { format, mediaType } = CONTENT_TYPES[this.settings.contentType];
    return new WebSocketMethod(md, messageCodec(md, format), { ...base, [H.contentType]: mediaType }, this.settings);
  }
}

/**
 * Triple over WebSocket, the client half (`protocol: "websocket"`): each call opens a WebSocket
 * to the method's path (HTTP/1.1 upgrade; `wss://` for an `https://` provider; with `httpVersion:
 * "2"` an extended CONNECT on the pooled HTTP/2 session when the server advertises it, RFC 8441),
 * JSON or protobuf messages, all four call kinds. docs/protocol.md has the mapping.
 */
export const websocketClient: ProtocolClient = {
  name: "websocket",
  claims: () => false,
  contentType(o: WireOptions): string {
    if (o.compression !== undefined)
      throw new TypeError(`createClient: protocol websocket sends messages uncompressed; leave compression unset, got "${o.compression}"`);
    if (o.serialization !== undefined)
      throw new TypeError(`createClient: protocol websocket speaks json or proto, not serialization "${o.serialization}"; use protocol grpc`);
    const ct = o.contentType ?? "json";
    if (CONTENT_TYPES[ct] === undefined) throw new TypeError(`createClient: protocol websocket needs contentType json or proto, got "${ct}"`);
    return ct;
  },
  open: (settings: WireSettings) => new WebSocketSession(settings),
};
