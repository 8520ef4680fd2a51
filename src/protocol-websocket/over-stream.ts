// Owns `webSocketOnStream`, `streamSupportError`. A `ws` WebSocket on a stream it did not handshake
// itself: an HTTP/2 extended CONNECT stream (RFC 8441), through ws 8's internal `setSocket`. Must
// not change: the check that the installed ws still has `setSocket`, and the clear error when not.
import type { Duplex } from "node:stream";
import type * as Ws from "ws";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";

/** What we use of ws 8's WebSocket beyond its public API (`websocket-server.js` calls the same). */
interface StreamSettable {
  setSocket(socket: Duplex, head: Buffer, options: { maxPayload: number; skipUTF8Validation: boolean }): void;
  /** True: frames are sent unmasked and received masked (the server's side); false: the client's. */
  _isServer: boolean;
  /** The subprotocol the handshake selected (`ws.protocol`). */
  _protocol: string;
}

/** ws's server defaults: pings answered (at most 60 pending), a close handshake given 30 s before the stream is destroyed. */
const WS_OPTIONS = Object.freeze({ autoPong: true, maxPendingAutoPongs: 60, closeTimeout: 30_000 });

/**
 * Undefined when the installed `ws` can run a WebSocket over an HTTP/2 stream (ws 8: its
 * `WebSocket` has `setSocket`), else the error a call gets: 501 / `unimplemented`, naming the fix.
 */
export function streamSupportError(pkg: { readonly WebSocket: typeof Ws.WebSocket }): RpcError | undefined {
  const proto = pkg.WebSocket?.prototype as Partial<StreamSettable> | undefined;
  if (typeof proto?.setSocket === "function") return undefined;
  return new RpcError(
    Code.Unimplemented,
    "WebSocket over HTTP/2 (RFC 8441) needs ws 8, whose WebSocket has setSocket; the installed ws has none: install ws@8, or open the call over HTTP/1.1",
    { httpStatus: 501 },
  );
}

/**
 * A WebSocket on `stream`, open at once: the extended CONNECT was answered 200 (server) or
 * received its 200 (client). Frames are masked by the client, as over HTTP/1.1 (RFC 8441 §5).
 * Throws the {@link streamSupportError} when the installed `ws` cannot.
 */
export function webSocketOnStream(
  pkg: { readonly WebSocket: typeof Ws.WebSocket },
  stream: Duplex,
  opts: { readonly server: boolean; readonly maxPayload: number; readonly protocol?: string },
): Ws.WebSocket {
  const unsupported = streamSupportError(pkg);
  if (unsupported) throw unsupported;
  // ws's server makes its sockets so, with its own options (the typings allow no options here).
  const Make = pkg.WebSocket as unknown as new (address: null, protocols: undefined, options: object) => Ws.WebSocket;
  const ws = new Make(null, undefined, WS_OPTIONS);
  const raw = ws as unknown as StreamSettable;
  raw._isServer = opts.server;
  raw._protocol = opts.protocol ?? "";
  raw.setSocket(stream, Buffer.alloc(0), { maxPayload: opts.maxPayload, skipUTF8Validation: false });
  return ws;
}
