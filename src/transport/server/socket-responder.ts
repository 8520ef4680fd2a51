// Owns `SocketResponder`. Answers on a bare HTTP/1.1 socket whose request node:http could not parse
// (headers too large, too slow, malformed): one response with `Connection: close`, then the socket
// ends. Must not change: every per-connection and per-exchange bound (docs/security.md).
import * as http from "node:http";
import type { Socket } from "node:net";
import type { OutHeaders, Responder } from "./exchange.js";

/** `content-type` → `Content-Type`, as node:http writes names and as raw readers expect. */
function titleCase(name: string): string {
  return name.replace(/(^|-)([a-z])/g, (_m, dash: string, c: string) => dash + c.toUpperCase());
}

/**
 * Answers on a bare HTTP/1.1 socket whose request node:http could not parse (headers too large,
 * too slow, malformed): one response with `Connection: close`, then the socket ends. There are
 * no request headers to read.
 */
export class SocketResponder implements Responder {
  readonly headers: Readonly<Record<string, undefined>> = {};
  headersSent = false;

  constructor(private readonly socket: Socket) {}

  respond(status: number, headers: OutHeaders, body: Uint8Array | string = ""): void {
    if (this.headersSent) return;
    this.headersSent = true;
    const bytes = typeof body === "string" ? Buffer.from(body) : body;
    let head = `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ""}\r\n`;
    for (const [k, v] of Object.entries(headers)) {
      for (const one of Array.isArray(v) ? v : [v]) head += `${titleCase(k)}: ${one}\r\n`;
    }
    head += `Content-Length: ${bytes.byteLength}\r\nConnection: close\r\n\r\n`;
    this.socket.end(Buffer.concat([Buffer.from(head, "latin1"), bytes]));
  }

  end(): void {
    this.socket.end();
  }

  reset(): void {
    this.socket.destroy();
  }
}
