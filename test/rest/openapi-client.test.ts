import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OpenAPIClientAxios } from "openapi-client-axios";
import { createServer, type TripleServer } from "../../src/index.js";
import { UserService } from "./fixtures.js";

type AnyClient = Record<string, (params?: unknown, data?: unknown, config?: unknown) => Promise<{ status: number; data: any }>>;

/**
 * An independent OpenAPI client: openapi-client-axios reads the served /openapi.json and builds
 * one function per operationId, placing path, query and header parameters where the document
 * says. Nothing of triple-rpc's client is involved.
 */
describe("an OpenAPI client driven by the served document alone (openapi-client-axios)", () => {
  let server: TripleServer;
  let client: AnyClient;
  before(async () => {
    server = createServer({ services: [new UserService()], openapi: true });
    await server.listen({ port: 0 });
    const api = new OpenAPIClientAxios({ definition: `${server.url}/openapi.json`, axiosConfigDefaults: { baseURL: server.url } });
    client = (await api.init()) as unknown as AnyClient;
  });
  after(() => server.close());

  it("calls REST routes: path variable, query arrays, headers, JSON bodies", async () => {
    const one = await client.demo_UserService_get({ id: 1 });
    assert.equal(one.status, 200);
    assert.deepEqual(one.data, { id: 1, name: "ann", tags: ["admin"] });
    const list = await client.demo_UserService_list({ limit: 5, tag: ["admin"] });
    assert.deepEqual(
      list.data.map((u: { id: number }) => u.id),
      [1],
    );
    assert.equal((await client.demo_UserService_me({ "x-user": "eve" })).data, "you are eve");
    const created = await client.demo_UserService_create(null, { id: 0, name: "zed" });
    assert.equal(created.data.name, "zed");
    assert.equal((await client.demo_UserService_remove({ id: 9, "x-tenant": "eu" })).data, "deleted 9 in eu");
    const types = await client.demo_UserService_types({ flag: true, big: "123456789012345678901", when: "2024-05-06T07:08:09Z", n: [1, 2] });
    assert.equal(types.data, "boolean:true bigint:123456789012345678901 2024-05-06T07:08:09.000Z number,number:1+2");
  });

  it("calls the same methods by their RPC paths", async () => {
    assert.equal((await client.demo_UserService_get_rpc(null, [2])).data.id, 2);
    assert.equal((await client.demo_UserService_ping_rpc(null, { text: "hi" })).data, "pong hi");
  });

  it("uploads a file with multipart/form-data to a REST route", async () => {
    const form = new FormData();
    form.append("title", "portrait");
    form.append("file", new Blob([new Uint8Array(1234)], { type: "image/jpeg" }), "face.jpg");
    const r = await client.demo_UserService_avatar({ id: 2 }, form);
    assert.equal(r.data, "user 2: portrait face.jpg 1234 bytes");
  });

  it("a request that fails validation (limit above its maximum in the document) gets a 400 naming it", async () => {
    const doc = (await fetch(`${server.url}/openapi.json`).then((r) => r.json())) as any;
    const limit = doc.paths["/users"].get.parameters.find((p: { name: string }) => p.name === "limit");
    assert.deepEqual(limit.schema, { type: "number", format: "double", minimum: 1, maximum: 50, description: "page size" });
    const err = await client.demo_UserService_list({ limit: 51 }).then(
      () => assert.fail("expected a 400"),
      (e: { response: { status: number; data: unknown } }) => e.response,
    );
    assert.equal(err.status, 400);
    const { details, ...body } = err.data as { details: { type: string }[] };
    assert.deepEqual(body, { status: 40, code: "invalid_argument", message: "parameter #1 (limit) must be at most 50" });
    assert.equal(details[0].type, "google.rpc.BadRequest");
  });

  it("a request that fails binding gets the documented error body", async () => {
    const err = await client.demo_UserService_get({ id: "abc" }).then(
      () => assert.fail("expected a 400"),
      (e: { response: { status: number; data: unknown } }) => e.response,
    );
    assert.equal(err.status, 400);
    assert.deepEqual(err.data, { status: 40, code: "invalid_argument", message: 'path parameter "id" must be a finite number, got string "abc"' });
  });
});
