import * as http2 from "node:http2";
import * as ws from "ws";
import { webSocketOnStream } from "../../src/protocol-websocket/over-stream.js";
import type { WsOutcome } from "./ws-helpers.js";

/** The URL each session of {@link settledSession} was opened to. */
const origins = new WeakMap<http2.ClientHttp2Session, URL>();

/** The headers of an extended CONNECT (RFC 8441) for a WebSocket to `path`. */
function connectHeaders(session: http2.ClientHttp2Session, path: string, extra: Record<string, string> = {}): http2.OutgoingHttpHeaders {
  const origin = origins.get(session) ?? new URL("http://127.0.0.1");
  return {
    ":method": "CONNECT",
    ":protocol": "websocket",
    ":scheme": origin.protocol.slice(0, -1),
    ":authority": origin.host,
    ":path": path,
    "sec-websocket-version": "13",
    ...extra,
  };
}

/** A session whose server's first SETTINGS arrived (extended CONNECT needs them). */
export async function settledSession(url: string, options: http2.SecureClientSessionOptions = {}): Promise<http2.ClientHttp2Session> {
  const session = http2.connect(url, options);
  session.on("error", () => {});
  origins.set(session, new URL(url));
  await new Promise((resolve, reject) => {
    session.once("remoteSettings", resolve);
    session.once("error", reject);
  });
  return session;
}

/**
 * {@link wsCall} over HTTP/2: an extended CONNECT on `session`, then `ws` framing on its stream
 * (masked, as a client's), `send`, then `end`, and everything until the server closes (or
 * `timeoutMs`). A refused CONNECT gives its status and body, no WebSocket.
 */
export function h2wsCall(
  session: http2.ClientHttp2Session,
  path: string,
  send: readonly (string | Buffer)[],
  opts: { end?: "text" | "close" | "none"; headers?: Record<string, string>; timeoutMs?: number; onOpen?: (w: ws.WebSocket) => void } = {},
): Promise<WsOutcome & { responseHeaders?: http2.IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    const stream = session.request(connectHeaders(session, path, opts.headers), { endStream: false });
    const messages: string[] = [];
    const timer = setTimeout(() => {
      stream.destroy();
      reject(new Error(`${path}: not closed within ${opts.timeoutMs ?? 5000} ms; got ${messages.length} messages`));
    }, opts.timeoutMs ?? 5000);
    stream.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    stream.once("response", (h) => {
      const status = Number(h[":status"]);
      if (status !== 200) {
        const chunks: Buffer[] = [];
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => {
          clearTimeout(timer);
          resolve({ messages, code: 0, reason: "", status, body: Buffer.concat(chunks).toString(), responseHeaders: h });
        });
        return;
      }
      const w = webSocketOnStream(ws, stream, { server: false, maxPayload: 0 });
      w.on("message", (d) => messages.push(String(d)));
      w.on("close", (code, reason) => {
        clearTimeout(timer);
        resolve({ messages, code, reason: reason.toString(), responseHeaders: h });
      });
      w.on("error", () => {});
      opts.onOpen?.(w);
      for (const m of send) w.send(m, { binary: typeof m !== "string" });
      if (opts.end === "text" || opts.end === undefined) w.send("");
      else if (opts.end === "close") w.close(1000);
    });
  });
}
