// tier: slow (the compilers fixture package and OpenAPI generators)
import * as assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { GreetServiceImpl } from "../../samples/greet/greet-service.js";
import { UserServiceImpl } from "../../samples/user/user-service.js";
import { createServer, Method, Param, Service, toOpenApi, type TripleServer } from "../../src/index.js";
import { post1 } from "../helpers/http.js";
import { AllTypesService } from "./all-types.js";
import { UserService } from "./fixtures.js";

const exec = promisify(execFile);
const ROOT = process.cwd();
/** TypeScript 5, tsx and openapi-typescript: the compilers fixture's own packages (its peer is TypeScript 5; the root has 7). */
const FIXTURE = join(ROOT, "test/fixtures/compilers/node_modules");

async function run(args: string[], cwd: string, extra: string[] = []): Promise<string> {
  try {
    const r = await exec(process.execPath, [...extra, ...args], { cwd, encoding: "utf8", timeout: 60_000 });
    return r.stdout;
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${args.join(" ")} failed: ${err.message}\n${err.stdout ?? ""}\n${err.stderr ?? ""}`);
  }
}

/**
 * A node_modules for the generated code: the root's packages (openapi-fetch, @hey-api/openapi-ts
 * and its client runtime) with the fixture's TypeScript 5 in place of the root's 7, whose
 * compiler API hey-api needs (run with --preserve-symlinks so its imports resolve here).
 */
function nodeModules(dir: string): void {
  const nm = join(dir, "node_modules");
  mkdirSync(nm);
  for (const name of readdirSync(join(ROOT, "node_modules"))) {
    if (name !== "typescript") symlinkSync(join(ROOT, "node_modules", name), join(nm, name));
  }
  symlinkSync(join(FIXTURE, "typescript"), join(nm, "typescript"));
}

/** Calls every sample operation with openapi-fetch, typed by openapi-typescript's `paths`. */
const FETCH_CLIENT = `
import createClient from "openapi-fetch";
import type { paths } from "./schema";

export async function viaOpenapiFetch(baseUrl: string): Promise<Record<string, unknown>> {
  // A .proto method also answers application/proto: openapi-fetch is told which media type to read.
  const c = createClient<paths, "application/json">({ baseUrl });
  const out: Record<string, unknown> = {};
  out.greet = (await c.POST("/greet.GreetService/Greet", { body: { name: "triple" } })).data?.greeting;
  out.greetCached = (await c.POST("/greet.GreetService/GreetCached", { body: { name: "ann" } })).data?.greeting;
  out.greetSlowly = (await c.POST("/greet.GreetService/GreetSlowly", { body: { name: "sam", delayMs: 1 } })).data?.greeting;
  out.greetWithDetails = (await c.POST("/greet.GreetService/GreetWithDetails", { body: { name: "triple" } })).data?.greeting;
  const bad = await c.POST("/greet.GreetService/GreetWithDetails", { body: { name: "nobody" } });
  out.greetWithDetailsError = bad.error ? \`\${bad.response.status} \${bad.error.code} \${bad.error.status} \${bad.error.details?.[0]?.type}\` : "no error";
  const stream = await c.POST("/greet.GreetService/GreetServerStream", { body: { name: "ada" }, parseAs: "text" });
  out.greetServerStream = (stream.data ?? "").split("\\n").filter((l) => l.startsWith("data:")).length;
  out.sayHello = (await c.POST("/sample.UserService/sayHello", { body: ["Ann"] })).data;
  out.register = (await c.POST("/sample.UserService/register", { body: { username: "ann", age: 30 } })).data;
  out.labels = (await c.POST("/sample.UserService/labels", { body: [{ b: "2", a: "1" }] })).data;
  out.upload = (await c.POST("/sample.UserService/upload", { body: { title: "t", file: "AQID" } })).data;
  out.saveUser = (await c.POST("/sample.UserService/saveUser", { body: { username: "ann", location: "Oslo" } })).data;
  const invalid = await c.POST("/sample.UserService/register", { body: { username: "ann" } as never });
  out.invalid = invalid.error?.details?.[0]?.debug?.fieldViolations;
  return out;
}
`;

/** The same with hey-api's generated SDK (its fetch client). */
const HEY_CLIENT = `
import { client } from "./hey/client.gen";
import * as sdk from "./hey/sdk.gen";

export async function viaHeyApi(baseUrl: string): Promise<Record<string, unknown>> {
  client.setConfig({ baseUrl });
  const out: Record<string, unknown> = {};
  out.greet = (await sdk.greetGreetServiceGreetRpc({ body: { name: "triple" } })).data?.greeting;
  out.greetCached = (await sdk.greetGreetServiceGreetCachedRpc({ body: { name: "ann" } })).data?.greeting;
  out.greetSlowly = (await sdk.greetGreetServiceGreetSlowlyRpc({ body: { name: "sam", delayMs: 1 } })).data?.greeting;
  out.greetWithDetails = (await sdk.greetGreetServiceGreetWithDetailsRpc({ body: { name: "triple" } })).data?.greeting;
  const bad = await sdk.greetGreetServiceGreetWithDetailsRpc({ body: { name: "nobody" } });
  out.greetWithDetailsError = bad.error ? \`\${bad.response.status} \${bad.error.code} \${bad.error.status} \${bad.error.details?.[0]?.type}\` : "no error";
  const { stream } = await sdk.greetGreetServiceGreetServerStreamRpc({ body: { name: "ada" } });
  let n = 0;
  for await (const _ of stream) n++;
  out.greetServerStream = n;
  out.sayHello = (await sdk.sampleUserServiceSayHelloRpc({ body: ["Ann"] })).data;
  out.register = (await sdk.sampleUserServiceRegisterRpc({ body: { username: "ann", age: 30 } })).data;
  out.labels = (await sdk.sampleUserServiceLabelsRpc({ body: [{ b: "2", a: "1" }] })).data;
  out.upload = (await sdk.sampleUserServiceUploadRpc({ body: { title: "t", file: "AQID" } })).data;
  out.saveUser = (await sdk.sampleUserServiceSaveUserRpc({ body: { username: "ann", location: "Oslo" } })).data;
  const invalid = await sdk.sampleUserServiceRegisterRpc({ body: { username: "ann" } as never });
  out.invalid = invalid.error?.details?.[0]?.debug?.fieldViolations;
  return out;
}
`;

const MAIN = `
import { viaHeyApi } from "./hey-client";
import { viaOpenapiFetch } from "./fetch-client";

const url = process.argv[2];
console.log(JSON.stringify({ "openapi-fetch": await viaOpenapiFetch(url), "hey-api": await viaHeyApi(url) }));
`;

const TSCONFIG = {
  compilerOptions: {
    target: "es2022",
    module: "esnext",
    moduleResolution: "bundler",
    strict: true,
    noEmit: true,
    skipLibCheck: true,
    types: ["node"],
    lib: ["es2022", "dom"],
  },
  include: ["*.ts", "hey/**/*.ts"],
};

const SHA_AQID = "039058c6f2c0cb492c533b0a4d14ef77cc0f78abccced5287d84a1a2011cfb81";

/**
 * Generated clients trust the document: the samples' served /openapi.json passes Redocly's
 * recommended rules, openapi-typescript (+ openapi-fetch) and hey-api generate clients from it,
 * tsc type-checks calls to every sample operation (a `.proto` method's body is its message's
 * fields), and the calls, run against a real server, all answer as the samples say.
 */
describe("OpenAPI: generated clients (openapi-fetch, hey-api) and a strict lint, from the served document", () => {
  let server: TripleServer;
  let dir: string;
  let doc: Record<string, any>;
  before(async () => {
    server = createServer({ services: [new GreetServiceImpl(), new UserServiceImpl()], openapi: true });
    await server.listen({ port: 0, host: "127.0.0.1" });
    doc = (await (await fetch(`${server.url}/openapi.json`)).json()) as Record<string, any>;
    dir = mkdtempSync(join(tmpdir(), "openapi-gen-"));
    writeFileSync(join(dir, "openapi.json"), JSON.stringify(doc));
    writeFileSync(join(dir, "package.json"), '{"type":"module"}');
    nodeModules(dir);
  });
  after(async () => {
    await server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("passes Redocly's recommended rules (the licence is the API owner's to state: toOpenApi's license option)", async () => {
    const { createConfig, lintFromString } = await import("@redocly/openapi-core");
    const config = await createConfig({ extends: ["recommended"], rules: { "info-license": "off" } });
    // The samples' served document, and the REST fixtures' (routes, every parameter source, bearer auth).
    for (const d of [doc, toOpenApi([UserService, AllTypesService])]) {
      const problems = await lintFromString({ source: JSON.stringify(d), absoluteRef: join(dir, "openapi.json"), config });
      const lines = problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`);
      assert.deepEqual(lines, []);
    }
  });

  it("documents every status the server sends, with the error schema (details and their JSON debug form)", () => {
    const responses = doc.paths["/sample.UserService/register"].post.responses;
    for (const s of ["400", "401", "403", "404", "405", "408", "409", "412", "413", "415", "429", "431", "499", "500", "503", "505"]) {
      assert.ok(responses[s], `no ${s}`);
    }
    const error = doc.components.schemas.Error;
    assert.ok(error.properties.details.items.properties.debug.properties.fieldViolations);
    assert.deepEqual(Object.keys(doc.paths["/sample.UserService/upload"].post.requestBody.content)[0], "multipart/form-data");
  });

  it("openapi-typescript + openapi-fetch and hey-api: generated, type-checked with tsc, every sample operation called", async () => {
    await Promise.all([
      run([join(FIXTURE, "openapi-typescript/bin/cli.js"), "openapi.json", "-o", "schema.d.ts"], dir),
      run([join(dir, "node_modules/@hey-api/openapi-ts/dist/run.mjs"), "-i", "openapi.json", "-o", "hey"], dir, [
        "--preserve-symlinks",
        "--preserve-symlinks-main",
      ]),
    ]);
    writeFileSync(join(dir, "fetch-client.ts"), FETCH_CLIENT);
    writeFileSync(join(dir, "hey-client.ts"), HEY_CLIENT);
    writeFileSync(join(dir, "main.ts"), MAIN);
    writeFileSync(join(dir, "tsconfig.json"), JSON.stringify(TSCONFIG));
    await run([join(FIXTURE, "typescript/bin/tsc"), "-p", "tsconfig.json"], dir);
    const out = JSON.parse(await run([join(FIXTURE, "tsx/dist/cli.mjs"), "main.ts", server.url], dir));
    for (const gen of ["openapi-fetch", "hey-api"]) {
      assert.deepEqual(
        out[gen],
        {
          greet: "triple",
          greetCached: "hello, ann",
          greetSlowly: "sam",
          greetWithDetails: "triple",
          greetWithDetailsError: "400 invalid_argument 40 google.rpc.ErrorInfo",
          greetServerStream: 3,
          sayHello: { message: "hello, Ann" },
          register: { message: "registered ann, age 30" },
          labels: { message: "a=1,b=2" },
          upload: { message: `t: 3 bytes, sha256 ${SHA_AQID}` },
          saveUser: { message: "saved ann from Oslo" },
          invalid: [{ field: "age", description: "is missing" }],
        },
        gen,
      );
    }
  });
});

@Service("bytes.Store")
class Store {
  @Method() async put(@Param({ name: "data", type: Uint8Array }) data: Uint8Array): Promise<number> {
    return data.byteLength;
  }
}

/** Every JSON form the document offers for a lone bytes parameter is one the binder takes. */
describe("OpenAPI: the document and the binder agree", () => {
  let server: TripleServer;
  before(async () => {
    server = createServer({ services: [new Store(), new UserServiceImpl()] });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server?.close());

  it('a lone bytes parameter: the array form ["<base64>"], the bare text, the named object, octets', async () => {
    const json = (toOpenApi([Store]).paths["/bytes.Store/put"] as any).post.requestBody.content["application/json"].schema;
    const asArray = json.anyOf.find((f: { type?: string }) => f.type === "array");
    assert.deepEqual(asArray.prefixItems, [{ type: "string", contentEncoding: "base64" }]);
    for (const body of ['["AQID"]', '"AQID"', '{"data":"AQID"}', "[1,2,3]"]) {
      const r = await post1(server.url, "/bytes.Store/put", { headers: { "content-type": "application/json" }, body });
      assert.equal(r.status, 200, `${body}: ${r.text()}`);
      assert.equal(r.json(), 3, body);
    }
  });

  it("text/plain is text: JSON sent without its Content-Type binds as the string, braces included (docs/binding.md)", async () => {
    const r = await post1(server.url, "/sample.UserService/sayHello", { headers: { "content-type": "text/plain;charset=UTF-8" }, body: '{"name":"Ann"}' });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json(), { message: 'hello, {"name":"Ann"}' });
  });
});
