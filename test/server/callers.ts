import * as http from "node:http";
import { H2, post1, type Reply, type RequestInit } from "../helpers/http.js";

/** Calls a server over one HTTP version: HTTP/1.1 on a keep-alive agent, or one h2c session. */
export interface Caller {
  readonly version: "1.1" | "2";
  call(path: string, init?: RequestInit): Promise<Reply>;
  close(): void;
}

/** HTTP/1.1 with one keep-alive socket, so consecutive calls share a connection. */
export function http1Caller(url: string): Caller & { agent: http.Agent } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  return {
    version: "1.1",
    agent,
    call: (path, init = {}) => post1(url, path, { ...init, agent: init.agent ?? agent }),
    close: () => agent.destroy(),
  };
}

/** HTTP/2 prior knowledge over one session. */
export function http2Caller(url: string): Caller & { h2: H2 } {
  const h2 = new H2(url);
  return {
    version: "2",
    h2,
    call: (path, init = {}) => h2.request(path, init),
    close: () => h2.close(),
  };
}

/** Asserts nothing; parses an error body for concise comparisons. */
export function errorOf(r: Reply): { status: number; message: string; code: string } {
  return r.json();
}
