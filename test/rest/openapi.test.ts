import * as assert from "node:assert/strict";
import { execFile } from "node:child_process";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { createServer, describeService, toOpenApi, type TripleServer } from "../../src/index.js";
import { post1, post2 } from "../helpers/http.js";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { UserServiceImpl } from "../../samples/user/user-service.js";
import { AllTypesService } from "./all-types.js";
import { UserService } from "./fixtures.js";

const run = promisify(execFile);

/** Validates a document against the OpenAPI 3.1 schema with @seriousme/openapi-schema-validator. */
async function validate(doc: unknown): Promise<void> {
  const { Validator } = await import("@seriousme/openapi-schema-validator");
  const v = new Validator();
  const res = await v.validate(doc as never);
  assert.equal(v.version, "3.1");
  assert.ok(res.valid, `not a valid OpenAPI 3.1 document: ${JSON.stringify(res.errors, null, 2)}`);
}

type Doc = Record<string, any>;

describe("OpenAPI 3.1 (issue 28, item 3)", () => {
  it("the samples and the REST fixture give valid documents", async () => {
    await validate(toOpenApi([UserService]));
    await validate(toOpenApi([new GreetServiceImpl(), new UserServiceImpl()], { title: "samples", servers: [{ url: "http://127.0.0.1:50051" }] }));
  });

  it("a fixture of every type, parameter source and auth gives a valid document with the expected schemas", async () => {
    const doc: Doc = toOpenApi([AllTypesService]);
    await validate(doc);
    const schemas = doc.components.schemas;
    const e = schemas.Everything;
    assert.deepEqual(e.properties.text, { type: "string", minLength: 1, maxLength: 20, pattern: "^[a-z]+$", description: "lower-case text" });
    assert.deepEqual(e.properties.count, { type: "number", format: "double", minimum: 0, maximum: 100 });
    assert.deepEqual(e.properties.id, { type: "string", format: "uuid" });
    assert.deepEqual(e.properties.colour, { type: "string", enum: ["red", "green"] });
    assert.deepEqual(e.properties.emails, { type: "array", items: { type: "string", format: "email" }, minItems: 1, maxItems: 3 });
    assert.deepEqual(e.properties.small, { type: "integer", format: "int32" });
    assert.deepEqual(e.properties.large, { type: "integer", format: "int64" });
    assert.deepEqual(e.properties.when, { type: "string", format: "date-time" });
    assert.deepEqual(e.properties.bytes, { type: "string", contentEncoding: "base64" });
    assert.deepEqual(e.properties.scores, { type: "object", additionalProperties: { type: "number", format: "double" } });
    assert.deepEqual(e.properties.byCity, { type: "object", additionalProperties: { type: "array", items: { $ref: "#/components/schemas/Address" } } });
    assert.deepEqual(e.properties.next, { $ref: "#/components/schemas/Everything" });
    assert.deepEqual(e.properties.anything, {});
    assert.ok(!e.required.includes("next") && e.required.includes("huge"));
    assert.deepEqual(schemas.Error.required, ["status", "message", "code"]);

    const echo = doc.paths["/fixture.AllTypes/echo"].post;
    assert.equal(echo.description, "Echoes the value");
    assert.deepEqual(echo.responses["200"].content["application/json"].schema, { $ref: "#/components/schemas/Everything" });
    assert.deepEqual(echo.responses["400"], { $ref: "#/components/responses/Error400" });
    const upload = doc.paths["/fixture.AllTypes/upload"].post.requestBody.content;
    assert.deepEqual(Object.keys(upload).sort(), ["application/json", "application/x-www-form-urlencoded", "application/xml", "multipart/form-data"]);
    assert.equal(upload["multipart/form-data"].schema.properties.file.format, "binary");
    assert.equal(upload["multipart/form-data"].schema.properties.raw.format, "binary");
    const positional = doc.paths["/fixture.AllTypes/positional"].post.requestBody.content["application/json"].schema;
    assert.equal(positional.prefixItems.length, 3);
    assert.equal(positional.minItems, 2);
    assert.ok(doc.paths["/fixture.AllTypes/text"].post.requestBody.content["text/plain"]);

    const sources = doc.paths["/all/{id}/{when}"].get;
    assert.equal(sources.operationId, "fixture_AllTypes_sources");
    assert.equal(sources.requestBody, undefined);
    const params = Object.fromEntries(sources.parameters.map((p: Doc) => [p.name, p]));
    assert.deepEqual(params.id.in, "path");
    assert.equal(params.id.required, true);
    assert.equal(params.when.schema.format, "date-time");
    assert.deepEqual(params.tag, {
      name: "tag",
      in: "query",
      required: true,
      schema: { type: "array", items: { type: "string" } },
      style: "form",
      explode: true,
    });
    assert.equal(params.flag.required, false);
    assert.deepEqual(params.limit.schema, { type: "number", format: "double", minimum: 1, maximum: 100 });
    assert.equal(params["x-tenant"].in, "header");

    assert.deepEqual(doc.components.securitySchemes, { bearerAuth: { type: "http", scheme: "bearer" } });
    assert.deepEqual(doc.paths["/all/{id}"].post.security, [{ bearerAuth: [] }]);
    assert.match(doc.paths["/fixture.AllTypes/secret"].post.description, /roles: admin/);
    assert.ok(doc.paths["/fixture.AllTypes/secret"].post.responses["401"]);
    assert.deepEqual(doc.tags, [{ name: "fixture.AllTypes", description: "Every type and every parameter source" }]);
  });

  it("rpcPaths: false leaves only the REST mappings", async () => {
    const doc: Doc = toOpenApi([UserService], { rpcPaths: false });
    await validate(doc);
    assert.ok(Object.keys(doc.paths).every((p) => !p.startsWith("/demo.")));
    assert.ok(doc.paths["/users/{id}"].get && doc.paths["/users/{id}"].head === undefined);
  });

  it("version and group registrations add their headers", async () => {
    const doc: Doc = toOpenApi([{ ...describeService(UserService), version: "1.0.0", group: "blue" }]);
    await validate(doc);
    const params = doc.paths["/users/{id}"].get.parameters.map((p: Doc) => `${p.in}:${p.name}`);
    assert.deepEqual(params, ["path:id", "header:tri-service-version", "header:tri-service-group"]);
  });

  describe("served by createServer({ openapi }) and exported by the CLI", () => {
    let server: TripleServer;
    before(async () => {
      server = createServer({ services: [new UserService()], openapi: { title: "Users", version: "2.1.0" } });
      await server.listen({ port: 0 });
    });
    after(() => server.close());

    it("GET /openapi.json over HTTP/1.1 and HTTP/2: the document of the registered services, no built-ins", async () => {
      for (const get of [post1, post2]) {
        const r = await get(server.url, "/openapi.json", { method: "GET" });
        assert.equal(r.status, 200);
        assert.equal(r.headers["content-type"], "application/json");
        const doc: Doc = r.json();
        await validate(doc);
        assert.deepEqual(doc.info, { title: "Users", version: "2.1.0" });
        assert.ok(doc.paths["/users/{id}"].get);
        assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith("/grpc.")));
      }
      const head = await post2(server.url, "/openapi.json", { method: "HEAD" });
      assert.equal(head.status, 200);
      assert.equal(head.body.length, 0);
      assert.ok(Number(head.headers["content-length"]) > 1000);
    });

    it("/docs serves Swagger UI from node_modules; unknown files are 404; off by default", async () => {
      const page = await post1(server.url, "/docs", { method: "GET" });
      assert.equal(page.status, 200);
      assert.match(page.text(), /<script src="\/docs\/swagger-ui-bundle.js">/);
      const js = await post2(server.url, "/docs/swagger-ui-bundle.js", { method: "GET" });
      assert.equal(js.status, 200);
      assert.ok(js.body.length > 100_000);
      assert.match((await post1(server.url, "/docs/init.js", { method: "GET" })).text(), /url: "\/openapi.json"/);
      assert.equal((await post1(server.url, "/docs/../package.json", { method: "GET" })).status, 404);
      const plain = createServer({ services: [new UserService()] });
      await plain.listen({ port: 0 });
      try {
        assert.equal((await post1(plain.url, "/openapi.json", { method: "GET" })).status, 404);
      } finally {
        await plain.close();
      }
    });

    it("npx triple-rpc openapi <module> prints the same document", async () => {
      const cli = path.join(__dirname, "../../src/cli/main.js");
      const { stdout } = await run(process.execPath, [cli, "openapi", path.join(__dirname, "fixtures.js"), "--title", "Users", "--api-version", "2.1.0"]);
      const doc: Doc = JSON.parse(stdout);
      await validate(doc);
      const served = (await post1(server.url, "/openapi.json", { method: "GET" })).json();
      assert.deepEqual(doc, served);
    });
  });
});
