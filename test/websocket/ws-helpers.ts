import { WebSocket } from "ws";

/** What one raw WebSocket call saw: its messages (text) and how it closed. */
export interface WsOutcome {
  readonly messages: string[];
  readonly code: number;
  readonly reason: string;
  /** Set when the handshake was refused: the HTTP status and body. */
  readonly status?: number;
  readonly body?: string;
}

/**
 * Opens `url` as a raw WebSocket (the `ws` client, no triple-rpc code), sends `send` (strings as
 * text, Buffers as binary), then `end` ("text": the empty end-of-request text message,
 * "close": close 1000, "none"), and collects everything until the server closes (or `timeoutMs`).
 */
export function wsCall(
  url: string,
  send: readonly (string | Buffer)[],
  opts: { end?: "text" | "close" | "none"; headers?: Record<string, string>; protocols?: string[]; timeoutMs?: number; autoPong?: boolean } = {},
): Promise<WsOutcome> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, opts.protocols ?? [], { headers: opts.headers, autoPong: opts.autoPong ?? true });
    const messages: string[] = [];
    const timer = setTimeout(() => {
      ws.terminate();
      reject(new Error(`${url}: not closed within ${opts.timeoutMs ?? 5000} ms; got ${messages.length} messages`));
    }, opts.timeoutMs ?? 5000);
    ws.on("unexpected-response", (_req, res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        clearTimeout(timer);
        resolve({ messages, code: 0, reason: "", status: res.statusCode, body: Buffer.concat(chunks).toString() });
      });
    });
    ws.on("open", () => {
      for (const m of send) ws.send(m, { binary: typeof m !== "string" });
      if (opts.end === "text" || opts.end === undefined) ws.send("");
      else if (opts.end === "close") ws.close(1000);
    });
    ws.on("message", (d) => messages.push(String(d)));
    ws.on("close", (code, reason) => {
      clearTimeout(timer);
      resolve({ messages, code, reason: reason.toString() });
    });
    ws.on("error", (e) => {
      if (ws.readyState === WebSocket.CLOSED) return;
      clearTimeout(timer);
      reject(e);
    });
  });
}

/** `http://host:port` → `ws://host:port` plus `path`. */
export function wsUrl(httpUrl: string, path: string): string {
  return httpUrl.replace(/^http/, "ws") + path;
}
