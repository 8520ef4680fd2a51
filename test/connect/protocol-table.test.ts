import { createClient as createConnectClient, ConnectError, type Transport } from "@connectrpc/connect";
import { compressionGzip, createConnectTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { decodeErrorInfo, ERROR_INFO_TYPE } from "../../samples/greet/error-info.js";
import { GREET_CACHE_CONTROL, GREET_ERROR_DOMAIN, GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { type Client, closeClient, Code, codeName, createClient, createServer, RpcError, type TripleServer } from "../../src/index.js";
import { H2, JSON_HEADERS, post1, type Reply } from "../helpers/http.js";
import { greetDescriptors } from "./greet-descriptors.js";

/** What one unary call came back with, whatever the protocol: a greeting or an error. */
interface Outcome {
  greeting?: string;
  code?: number;
  message?: string;
  details?: { type: string; value: Uint8Array }[];
}

/** One protocol over one HTTP version, seen through the same three questions. */
interface Way {
  name: string;
  unary(method: "Greet" | "GreetWithDetails" | "GreetCached", name: string): Promise<Outcome>;
  slow(delayMs: number, timeoutMs: number): Promise<Outcome>;
  serverStream(name: string): Promise<string[]>;
}

const CODE_BY_NAME = new Map(Array.from({ length: 17 }, (_, c) => [codeName(c as Code), c]));

/** Triple HTTP JSON: a bare JSON body; errors as `{status, message, code, details?}`; streams as SSE. */
function tripleOutcome(r: Reply): Outcome {
  const body = r.json();
  if (r.status === 200) return { greeting: body.greeting };
  return {
    code: CODE_BY_NAME.get(body.code),
    message: body.message,
    details: (body.details ?? []).map((d: { type: string; value: string }) => ({ type: d.type, value: Buffer.from(d.value, "base64") })),
  };
}

function tripleWay(name: string, send: (path: string, body: string, headers?: Record<string, string>) => Promise<Reply>): Way {
  return {
    name,
    unary: async (method, n) => tripleOutcome(await send(`/greet.GreetService/${method}`, JSON.stringify({ name: n }))),
    slow: async (delayMs, timeoutMs) =>
      tripleOutcome(
        await send("/greet.GreetService/GreetSlowly", JSON.stringify({ name: "s", delay_ms: delayMs }), { "tri-service-timeout": String(timeoutMs) }),
      ),
    serverStream: async (n) => {
      const r = await send("/greet.GreetService/GreetServerStream", JSON.stringify({ name: n }));
      assert.match(String(r.headers["content-type"]), /^text\/event-stream/);
      return r
        .text()
        .split("\n\n")
        .filter((e) => e.startsWith("data: "))
        .map((e) => JSON.parse(e.slice(6)).greeting);
    },
  };
}

async function settle(p: Promise<{ greeting: string }>): Promise<Outcome> {
  try {
    return { greeting: (await p).greeting };
  } catch (e) {
    if (e instanceof ConnectError) {
      const details = e.details.map((d) => ("value" in d && "type" in d ? { type: d.type, value: d.value } : { type: "?", value: new Uint8Array() }));
      return { code: e.code, message: e.rawMessage, details };
    }
    if (e instanceof RpcError) return { code: e.code, message: e.rawMessage, details: e.details };
    throw e;
  }
}

function connectWay(name: string, make: (baseUrl: string) => Transport, baseUrl: () => string): Way {
  const { service } = greetDescriptors();
  let client: any;
  const c = () => (client ??= createConnectClient(service, make(baseUrl())));
  const method = { Greet: "greet", GreetWithDetails: "greetWithDetails", GreetCached: "greetCached" } as const;
  return {
    name,
    unary: (m, n) => settle(c()[method[m]]({ name: n })),
    slow: (delayMs, timeoutMs) => settle(c().greetSlowly({ name: "s", delayMs }, { timeoutMs })),
    serverStream: async (n) => {
      const got: string[] = [];
      for await (const r of c().greetServerStream({ name: n })) got.push(r.greeting);
      return got;
    },
  };
}

/**
 * One table over every protocol and HTTP version against the greet sample (issue 16): the same
 * greeting, the same wrong-name error (code and text), the same details, the same deadline and
 * the same three streamed greetings, whoever asks.
 */
describe("the greet sample answers every protocol × HTTP version alike", () => {
  let server: TripleServer;
  let h2: H2;
  let grpcClient: Client<GreetServiceImpl>;
  const url = () => server.url;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl()] });
    await server.listen({ port: 0 });
    h2 = new H2(server.url);
    grpcClient = createClient(GreetServiceImpl, { providers: [server.url], protocol: "grpc", retries: 0 });
  });
  after(async () => {
    closeClient(grpcClient);
    h2.close();
    await server.close();
  });

  const ways: Way[] = [
    tripleWay("Triple JSON, HTTP/1.1", (path, body, headers) => post1(url(), path, { headers: { ...JSON_HEADERS, ...headers }, body })),
    tripleWay("Triple JSON, HTTP/2", (path, body, headers) => h2.request(path, { headers: { ...JSON_HEADERS, ...headers }, body })),
    {
      name: "gRPC, HTTP/2 (triple-rpc's client)",
      unary: (m, n) => {
        const g = grpcClient;
        return settle(m === "Greet" ? g.greet({ name: n }) : m === "GreetWithDetails" ? g.greetWithDetails({ name: n }) : g.greetCached({ name: n }));
      },
      slow: (delayMs, timeoutMs) => settle(grpcClient.greetSlowly({ name: "s", delay_ms: delayMs }, { timeoutMs })),
      serverStream: async (n) => {
        const got: string[] = [];
        for await (const r of grpcClient.greetServerStream({ name: n })) got.push(r.greeting);
        return got;
      },
    },
    connectWay("Connect JSON, HTTP/1.1", (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1" }), url),
    connectWay("Connect binary, HTTP/1.1", (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }), url),
    connectWay("Connect JSON, HTTP/2", (baseUrl) => createConnectTransport({ baseUrl, httpVersion: "2" }), url),
    connectWay(
      "Connect binary, HTTP/2, gzip both ways",
      (baseUrl) =>
        createConnectTransport({
          baseUrl,
          httpVersion: "2",
          useBinaryFormat: true,
          sendCompression: compressionGzip,
          acceptCompression: [compressionGzip],
          compressMinBytes: 0,
        }),
      url,
    ),
    connectWay("gRPC-Web binary, HTTP/1.1", (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "1.1", useBinaryFormat: true }), url),
    connectWay("gRPC-Web binary, HTTP/2", (baseUrl) => createGrpcWebTransport({ baseUrl, httpVersion: "2", useBinaryFormat: true }), url),
  ];

  for (const way of ways) {
    describe(way.name, () => {
      it("Greet: the accepted name is greeted", async () => {
        assert.deepEqual(await way.unary("Greet", "triple"), { greeting: "triple" });
      });

      it("Greet: a wrong name is unknown with the handler's exact text", async () => {
        const o = await way.unary("Greet", "nobody");
        assert.equal(o.code, Code.Unknown);
        assert.equal(o.message, "name is not right: nobody");
        assert.deepEqual(o.details, []);
      });

      it("GreetWithDetails: invalid_argument with the google.rpc.ErrorInfo detail", async () => {
        const o = await way.unary("GreetWithDetails", "nobody");
        assert.equal(o.code, Code.InvalidArgument);
        assert.equal(o.message, "name is not right: nobody");
        assert.equal(o.details?.length, 1);
        assert.equal(o.details?.[0].type, ERROR_INFO_TYPE);
        assert.deepEqual(decodeErrorInfo(o.details![0].value), {
          reason: "NAME_NOT_RIGHT",
          domain: GREET_ERROR_DOMAIN,
          metadata: { name: "nobody", accepted: "triple" },
        });
      });

      it("GreetCached (idempotent) answers over POST too", async () => {
        assert.deepEqual(await way.unary("GreetCached", "ann"), { greeting: "hello, ann" });
      });

      it("GreetSlowly: past the deadline it is deadline_exceeded", async () => {
        const o = await way.slow(5000, 150);
        assert.equal(o.code, Code.DeadlineExceeded, JSON.stringify(o));
        assert.deepEqual(await way.slow(1, 5000), { greeting: "s" });
      });

      it("GreetServerStream: the same three greetings", async () => {
        assert.deepEqual(await way.serverStream("ada"), ["hello, ada (1/3)", "hello, ada (2/3)", "hello, ada (3/3)"]);
      });
    });
  }

  it("the sample's Cache-Control constant is what GreetCached sets", async () => {
    const r = await post1(url(), "/greet.GreetService/GreetCached", { headers: JSON_HEADERS, body: '{"name":"x"}' });
    assert.equal(r.headers["cache-control"], GREET_CACHE_CONTROL);
  });
});
