import * as http from "node:http";
import * as http2 from "node:http2";

/** A response as tests look at it. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
  /** The body parsed as JSON (throws when it is not). */
  json(): any;
  text(): string;
}

function reply(status: number, headers: Reply["headers"], body: Buffer): Reply {
  return {
    status,
    headers,
    body,
    json: () => JSON.parse(body.toString("utf8")),
    text: () => body.toString("utf8"),
  };
}

/** Options of one test request. */
export interface RequestInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  agent?: http.Agent;
}

/** One HTTP/1.1 request with node:http (keep-alive agent optional). */
export function post1(url: string, path: string, init: RequestInit = {}): Promise<Reply> {
  const u = new URL(path, url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname + u.search,
        method: init.method ?? "POST",
        headers: init.headers,
        agent: init.agent ?? false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c) => chunks.push(c));
        res.on("end", () => resolve(reply(res.statusCode ?? 0, res.headers, Buffer.concat(chunks))));
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(init.body);
  });
}

/** An HTTP/2 (h2c prior knowledge) session for several requests. */
export class H2 {
  readonly session: http2.ClientHttp2Session;
  constructor(url: string) {
    this.session = http2.connect(url);
    this.session.on("error", () => {});
  }

  request(path: string, init: RequestInit = {}): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const stream = this.session.request({
        ":method": init.method ?? "POST",
        ":path": path,
        ...init.headers,
      });
      let status = 0;
      let headers: Reply["headers"] = {};
      const chunks: Buffer[] = [];
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        headers = h as Reply["headers"];
      });
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => resolve(reply(status, headers, Buffer.concat(chunks))));
      stream.on("error", reject);
      stream.end(init.body);
    });
  }

  close(): void {
    this.session.close();
  }
}

/** One HTTP/2 request on a fresh session. */
export async function post2(url: string, path: string, init: RequestInit = {}): Promise<Reply> {
  const h2 = new H2(url);
  try {
    return await h2.request(path, init);
  } finally {
    h2.close();
  }
}

/** JSON request headers. */
export const JSON_HEADERS = { "content-type": "application/json" } as const;
