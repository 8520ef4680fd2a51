import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";

/** A reply a raw test server sends for a path. */
export interface RawReply {
  status: number;
  headers?: Record<string, string>;
  body?: string;
}

/** A plain node:http server answering each path with a fixed reply, counting TCP connections. */
export async function startHttp1(replies: Record<string, RawReply>): Promise<{ url: string; connections: () => number; close(): Promise<void> }> {
  let connections = 0;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      const r = replies[req.url ?? ""] ?? { status: 200, headers: { "content-type": "application/json" }, body: "0" };
      res.writeHead(r.status, r.headers);
      res.end(r.body);
    });
  });
  server.on("connection", () => connections++);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => connections,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** An h2c server answering every unary call with `"ok"`, counting sessions and pings; it can GOAWAY or drop them. */
export async function startHttp2(): Promise<{
  url: string;
  sessions: http2.ServerHttp2Session[];
  pings: () => number;
  close(): Promise<void>;
}> {
  const sessions: http2.ServerHttp2Session[] = [];
  let pings = 0;
  const server = http2.createServer();
  server.on("session", (s) => {
    sessions.push(s);
    s.on("ping", () => pings++);
  });
  server.on("stream", (stream) => {
    stream.resume();
    stream.on("end", () => {
      if (stream.destroyed) return;
      stream.respond({ ":status": 200, "content-type": "application/json" });
      stream.end(JSON.stringify(`ok ${sessions.length}`));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sessions,
    pings: () => pings,
    close: () =>
      new Promise((r) => {
        for (const s of sessions) s.destroy();
        server.close(() => r());
      }),
  };
}
