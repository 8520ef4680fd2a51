import * as http from "node:http";
import * as https from "node:https";
import type { Socket } from "node:net";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import { connectFailure, isConnectErrorCode, transportError } from "./errors.js";
import type { Provider } from "./provider.js";
import type { HttpReply, TransportSettings, UnaryTransport } from "./transport.js";

/**
 * Triple HTTP unary over HTTP/1.1: one keep-alive agent per client, so consecutive calls to a
 * provider reuse its sockets instead of paying a TCP (and TLS) handshake each.
 */
export class Http1Transport implements UnaryTransport {
  private readonly agent: http.Agent;
  private readonly tlsAgent: https.Agent;

  constructor(private readonly settings: TransportSettings) {
    this.agent = new http.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16 });
    this.tlsAgent = new https.Agent({ keepAlive: true, maxSockets: 64, maxFreeSockets: 16, ...settings.tls });
  }

  post(
    provider: Provider,
    path: string,
    headers: http.OutgoingHttpHeaders,
    body: Uint8Array,
    signal: AbortSignal,
    maxBytes: number,
  ): Promise<HttpReply> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      let connected = false;
      let settled = false;
      let connectTimer: NodeJS.Timeout | undefined;
      const finish = (err: unknown, reply?: HttpReply) => {
        if (settled) return;
        settled = true;
        if (connectTimer) clearTimeout(connectTimer);
        signal.removeEventListener("abort", onAbort);
        if (err) reject(err);
        else resolve(reply as HttpReply);
      };
      const options: http.RequestOptions = {
        host: provider.host.startsWith("[") ? provider.host.slice(1, -1) : provider.host,
        port: provider.port,
        path,
        method: "POST",
        headers: { ...headers, "content-length": body.byteLength },
        agent: provider.secure ? this.tlsAgent : this.agent,
      };
      const req = (provider.secure ? https : http).request(options, (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        const declared = Number(res.headers["content-length"]);
        if (declared > maxBytes) {
          req.destroy();
          return finish(tooLarge(maxBytes));
        }
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > maxBytes) {
            req.destroy();
            finish(tooLarge(maxBytes));
            return;
          }
          chunks.push(c);
        });
        res.on("end", () =>
          finish(undefined, { status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks, size) }),
        );
        res.on("error", (e) => finish(signal.aborted ? signal.reason : transportError(provider.address, e)));
      });
      const onAbort = () => {
        req.destroy();
        finish(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      req.on("socket", (s: Socket) => {
        if (!s.connecting) {
          connected = true;
          return;
        }
        connectTimer = setTimeout(() => {
          const e = Object.assign(new Error(`connect timed out after ${this.settings.connectTimeoutMs} ms`), {
            code: "ETIMEDOUT",
          });
          req.destroy(e);
        }, this.settings.connectTimeoutMs);
        s.once(provider.secure ? "secureConnect" : "connect", () => {
          connected = true;
          if (connectTimer) clearTimeout(connectTimer);
        });
      });
      req.on("error", (e) => {
        if (signal.aborted) return finish(signal.reason);
        finish(!connected && isConnectErrorCode(e) ? connectFailure(provider.address, e) : transportError(provider.address, e));
      });
      req.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
    this.tlsAgent.destroy();
  }
}

function tooLarge(maxBytes: number): RpcError {
  return new RpcError(Code.ResourceExhausted, `the response is larger than ${maxBytes} bytes`);
}
