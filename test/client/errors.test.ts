import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { closeClient, Code, createClient, Method, RpcError, Service } from "../../src/index.js";
import { decodeGrpcMessage } from "../../src/protocol-grpc/status.js";
import { startHttp1 } from "./raw-servers.js";

/** A service whose every method the raw server answers with one error dialect. */
@Service("d.Svc")
class Dialects {
  @Method() async java(): Promise<void> {}
  @Method() async js(): Promise<void> {}
  @Method() async go(): Promise<void> {}
  @Method() async ours(): Promise<void> {}
  @Method() async empty503(): Promise<void> {}
  @Method() async empty429(): Promise<void> {}
  @Method() async empty415(): Promise<void> {}
  @Method() async empty404(): Promise<void> {}
  @Method() async empty408(): Promise<void> {}
  @Method() async empty418(): Promise<void> {}
  @Method() async html(): Promise<void> {}
}

const JSON_CT = { "content-type": "application/json" };

describe("client errors: every error-body dialect (ours, Dubbo Java, dubbo-js, dubbo-go) and the HTTP status table", () => {
  let raw: Awaited<ReturnType<typeof startHttp1>>;
  let client: ReturnType<typeof createClient<Dialects>>;
  before(async () => {
    raw = await startHttp1({
      "/d.Svc/java": { status: 500, headers: JSON_CT, body: '{"status":"403","message":"java says no"}' },
      "/d.Svc/js": { status: 500, headers: JSON_CT, body: '{"status":7,"message":"js says no"}' },
      "/d.Svc/go": { status: 500, headers: JSON_CT, body: '{"code":"not_found","message":"go says no"}' },
      "/d.Svc/ours": { status: 500, headers: { ...JSON_CT, "x-extra": "1" }, body: '{"status":70,"message":"ours","code":"unknown"}' },
      "/d.Svc/empty503": { status: 503 },
      "/d.Svc/empty429": { status: 429 },
      "/d.Svc/empty415": { status: 415 },
      "/d.Svc/empty404": { status: 404 },
      "/d.Svc/empty408": { status: 408 },
      "/d.Svc/empty418": { status: 418 },
      "/d.Svc/html": { status: 502, headers: { "content-type": "text/html" }, body: "<h1>Bad Gateway</h1>" },
    });
    client = createClient(Dialects, { providers: [raw.url], httpVersion: "1.1", cluster: "failfast" });
  });
  after(async () => {
    closeClient(client);
    await raw.close();
  });

  const fail = async (p: Promise<unknown>): Promise<RpcError> => {
    const e = await p.then(
      () => assert.fail("should fail"),
      (x: unknown) => x,
    );
    assert.ok(e instanceof RpcError, String(e));
    return e;
  };

  it("Dubbo Java: status as an HTTP status string", async () => {
    const e = await fail(client.java());
    assert.equal(e.code, Code.PermissionDenied);
    assert.equal(e.message, "java says no");
  });

  it("dubbo-js: status as a gRPC code number", async () => {
    const e = await fail(client.js());
    assert.equal(e.code, Code.PermissionDenied);
    assert.equal(e.message, "js says no");
  });

  it("dubbo-go: code alone", async () => {
    const e = await fail(client.go());
    assert.equal(e.code, Code.NotFound);
  });

  it("ours: code name, legacy status and response headers as metadata", async () => {
    const e = await fail(client.ours());
    assert.equal(e.code, Code.Unknown);
    assert.equal(e.legacyStatus, 70);
    assert.equal(e.httpStatus, 500);
    assert.equal(e.metadata["x-extra"], "1");
  });

  it("no body: the HTTP status decides (spec table 7.2)", async () => {
    assert.equal((await fail(client.empty503())).code, Code.Unavailable);
    assert.equal((await fail(client.empty429())).code, Code.Unavailable);
    assert.equal((await fail(client.empty415())).code, Code.Internal);
    assert.equal((await fail(client.empty404())).code, Code.Unimplemented);
    assert.equal((await fail(client.empty408())).code, Code.DeadlineExceeded);
    assert.equal((await fail(client.empty418())).code, Code.Unknown);
  });

  it("a non-JSON body becomes the message", async () => {
    const e = await fail(client.html());
    assert.equal(e.code, Code.Unavailable);
    assert.equal(e.message, "<h1>Bad Gateway</h1>");
  });

  it("grpc-message is percent-decoded leniently (raw text from Dubbo Java stays as it is)", () => {
    assert.equal(decodeGrpcMessage("caf%C3%A9 100%25"), "café 100%");
    assert.equal(decodeGrpcMessage("100% raw + plus"), "100% raw + plus");
    assert.equal(decodeGrpcMessage("bad %ZZ but %41"), "bad %ZZ but A");
  });
});
