import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import { createServer, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { frame, rawCall } from "../grpc/raw.js";

/**
 * A lower finding of the hostile run: reflection listed auth-protected services and methods to
 * callers without a token. Rule: once any registered method requires a token, reflection
 * requires a valid one too (any role); a server with no protected method serves it openly.
 */

@Service("hostile.Secrets", { auth: true })
class Secrets {
  @Method()
  async reveal(@Param() name: string): Promise<string> {
    return name;
  }
}

@Service("hostile.Open")
class Open {
  @Method()
  async ping(): Promise<string> {
    return "pong";
  }
}

/** ServerReflectionRequest { list_services: "" } (field 7, length-delimited, empty). */
const LIST_SERVICES = frame(Buffer.from([0x3a, 0x00]));

const verify = async (token: string) => (token === "good" ? { subject: "good" } : null);

async function listServices(url: string, headers: Record<string, string> = {}) {
  const session = http2.connect(url);
  session.on("error", () => {});
  try {
    return await rawCall(session, "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo", [LIST_SERVICES], headers);
  } finally {
    session.close();
  }
}

describe("hostile: reflection does not describe a protected API to callers without a token", () => {
  let guarded: TripleServer;
  let open: TripleServer;
  before(async () => {
    guarded = createServer({ services: [new Open()], auth: { verify } });
    // Registered after reflection: the rule must still see it.
    guarded.register(new Secrets());
    open = createServer({ services: [new Open()], auth: { verify } });
    await guarded.listen({ port: 0, host: "127.0.0.1" });
    await open.listen({ port: 0, host: "127.0.0.1" });
  });
  after(async () => {
    await guarded.close();
    await open.close();
  });

  it("without a token: unauthenticated, and no service name in the answer", async () => {
    const r = await listServices(guarded.url);
    assert.equal(r.grpcStatus, 16, r.grpcMessage);
    assert.ok(!r.data.includes("hostile.Secrets"));
  });

  it("with a bad token: unauthenticated", async () => {
    const r = await listServices(guarded.url, { authorization: "Bearer nope" });
    assert.equal(r.grpcStatus, 16, r.grpcMessage);
  });

  it("with a valid token: every service is listed", async () => {
    const r = await listServices(guarded.url, { authorization: "Bearer good" });
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    assert.ok(r.data.includes("hostile.Secrets"));
    assert.ok(r.data.includes("hostile.Open"));
  });

  it("a server with no protected method serves reflection without a token", async () => {
    const r = await listServices(open.url);
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    assert.ok(r.data.includes("hostile.Open"));
  });
});
