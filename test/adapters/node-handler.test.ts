import * as assert from "node:assert/strict";
import * as http from "node:http";
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { after, before, describe, it } from "node:test";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { closeClient, createClient, createHandler, type TripleHandler } from "../../src/index.js";
import { selfSigned } from "../helpers/tls.js";
import { post1 } from "../helpers/http.js";
import { APP_ROUTE, APP_TEXT, mountedContract, mountedOptions } from "./mounted.js";

type AnyServer = http.Server | http2.Http2Server;

/** Closes a server and every connection still open (clients keep idle HTTP/2 sessions). */
async function shut(server: AnyServer): Promise<void> {
  const done = new Promise((r) => server.close(r));
  for (const s of sockets.get(server) ?? []) s.destroy();
  await done;
}

/** The app's own handler: the app route, else a plain 404. */
function appRoute(req: http.IncomingMessage | http2.Http2ServerRequest, res: http.ServerResponse | http2.Http2ServerResponse): void {
  if (req.url === APP_ROUTE) (res as http.ServerResponse).writeHead(200, { "content-type": "text/plain" }).end(APP_TEXT);
  else (res as http.ServerResponse).writeHead(404).end("app 404");
}

const sockets = new WeakMap<AnyServer, Set<import("node:net").Socket>>();

async function listen(server: AnyServer): Promise<string> {
  const set = new Set<import("node:net").Socket>();
  sockets.set(server, set);
  server.on("connection", (s: import("node:net").Socket) => {
    set.add(s);
    s.once("close", () => set.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

for (const version of ["1.1", "2"] as const) {
  describe(`createHandler mounted in a node:http${version === "2" ? "2 (h2c)" : ""} server, next to an app route`, () => {
    let server: AnyServer;
    let handler: TripleHandler;
    let url = "";
    before(async () => {
      handler = createHandler(mountedOptions());
      const serve = (req: any, res: any) => handler(req, res, () => appRoute(req, res));
      server = version === "2" ? http2.createServer(serve) : http.createServer(serve);
      url = await listen(server);
    });
    after(async () => {
      await handler.close();
      await shut(server);
    });
    mountedContract(() => url, version === "2");

    it("paths the services do not have go to next (the app's 404)", async () => {
      if (version === "1.1") {
        const r = await post1(url, "/nope/Nothing", { body: "{}" });
        assert.equal(r.status, 404);
        assert.equal(r.text(), "app 404");
      }
      assert.ok(handler.serves("/greet.GreetService/Greet"));
      assert.ok(!handler.serves(APP_ROUTE));
      assert.ok(handler.paths().includes("/grpc.health.v1.Health/Check"));
    });
  });
}

describe("createHandler without next", () => {
  it("answers unknown paths with the protocol's 404, and refuses port options", async () => {
    const handler = createHandler(mountedOptions());
    const server = http.createServer(handler);
    const url = await listen(server);
    try {
      const r = await post1(url, "/nope/Nothing", { headers: { "content-type": "application/json" }, body: "{}" });
      assert.equal(r.status, 404);
      assert.throws(() => createHandler({ tls: {} } as never), /tls is a setting of the server that owns the port/);
      assert.throws(() => createHandler({ registry: "zookeeper://x" } as never), /registry needs a server that owns its port/);
    } finally {
      await handler.close();
      await shut(server);
    }
  });
});

describe("handler.onStream: a 'stream' listener on node:http2 without the compatibility API", () => {
  let server: http2.Http2Server;
  let handler: TripleHandler;
  let url = "";
  before(async () => {
    handler = createHandler(mountedOptions());
    server = http2.createServer();
    server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders, flags: number, rawHeaders: string[]) => {
      if (handler.onStream(stream, headers, flags, rawHeaders)) return;
      // The app's own streams.
      if (headers[":path"] === APP_ROUTE) {
        stream.respond({ ":status": 200, "content-type": "text/plain" });
        stream.end(APP_TEXT);
      } else {
        stream.respond({ ":status": 404 });
        stream.end("app 404");
      }
    });
    url = await listen(server);
  });
  after(async () => {
    await handler.close();
    await shut(server);
  });
  mountedContract(() => url, true);
});

describe("createHandler in http2.createSecureServer({ allowHTTP1: true }): h2 and HTTP/1.1 by ALPN", () => {
  it("our client calls it over https with HTTP/2 (unary, gRPC) and HTTP/1.1", async () => {
    const { key, cert } = selfSigned();
    const handler = createHandler({ services: [new GreetServiceImpl()] });
    const server = http2.createSecureServer({ key, cert, allowHTTP1: true }, handler);
    const url = (await listen(server as unknown as http2.Http2Server)).replace("http:", "https:");
    try {
      for (const combo of [{ httpVersion: "2" as const }, { httpVersion: "2" as const, contentType: "grpc+proto" as const }, { httpVersion: "1.1" as const }]) {
        const client = createClient(GreetServiceImpl, { providers: [url], tls: { ca: cert }, retries: 0, ...combo });
        try {
          assert.deepEqual(await client.greet({ name: "triple" }), { greeting: "triple" }, JSON.stringify(combo));
        } finally {
          await closeClient(client);
        }
      }
    } finally {
      await handler.close();
      await shut(server as unknown as http2.Http2Server);
    }
  });
});
