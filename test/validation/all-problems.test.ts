import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { createServer, Field, Method, Param, Service, type TripleServer } from "../../src/index.js";
import { post1 } from "../helpers/http.js";
import { assertWithin } from "../helpers/timing.js";

class Address {
  @Field({ type: String }) city!: string;
  @Field({ type: String, pattern: "^\\d{5}$" }) zip!: string;
}

class User {
  @Field({ type: String, minLength: 2 }) name!: string;
  @Field({ type: String, format: "email" }) email!: string;
  @Field({ type: Number, min: 0 }) age!: number;
  @Field({ type: Address }) address!: Address;
  @Field({ type: [String], optional: true, maxLength: 3 }) tags?: string[];
}

@Service("problems.Users")
class Users {
  calls = 0;
  @Method() async create(@Param({ name: "user", type: User }) user: User): Promise<string> {
    this.calls++;
    return user.name;
  }
  @Method() async pair(@Param({ name: "a", type: User }) a: User, @Param({ name: "n", type: Number, max: 10 }) n: number): Promise<number> {
    this.calls++;
    return n + a.age;
  }
  @Method() async signUp(
    @Param({ name: "username", type: String, minLength: 2 }) username: string,
    @Param({ name: "age", type: Number }) age: number,
    @Param({ name: "email", type: String, format: "email" }) email: string,
  ): Promise<string> {
    this.calls++;
    return `${username} ${age} ${email}`;
  }
  @Method() async many(@Param({ name: "xs", type: [Number] }) xs: number[]): Promise<number> {
    this.calls++;
    return xs.length;
  }
}

type Violation = { field: string; description: string };

/** The violations of a JSON error body, read as a browser would: JSON only, no protobuf decoder. */
function violationsOf(body: { details?: { type: string; debug?: { fieldViolations: Violation[] } }[] }): Violation[] {
  const d = body.details?.find((x) => x.type === "google.rpc.BadRequest");
  assert.ok(d?.debug, `no debug form of the BadRequest detail: ${JSON.stringify(body)}`);
  return d.debug.fieldViolations;
}

/**
 * A body with several missing fields, a wrong type and broken constraints answers ONE
 * invalid_argument listing every one of them (the binder's problems, then the constraints of
 * what bound), readable as JSON (`details[].debug.fieldViolations`) on Triple and Connect.
 */
describe("validation errors a browser can use", () => {
  let server: TripleServer;
  const users = new Users();
  before(async () => {
    server = createServer({ services: [users] });
    await server.listen({ port: 0, host: "127.0.0.1" });
  });
  after(() => server?.close());

  const BAD_USER = { name: "a", email: "nope", age: "x", address: { zip: "12" } };
  const EXPECTED: Violation[] = [
    { field: "user.age", description: 'must be a finite number, got string "x"' },
    { field: "user.address.city", description: "is missing" },
    { field: "user.name", description: "must be at least 2 characters long" },
    { field: "user.email", description: "must be an email address" },
    { field: "user.address.zip", description: "must match ^\\d{5}$" },
  ];

  for (const [way, headers] of [
    ["Triple JSON", { "content-type": "application/json" }],
    ["Connect JSON", { "content-type": "application/json", "connect-protocol-version": "1" }],
  ] as const) {
    it(`${way}: every missing field, bad value and broken constraint in one answer`, async () => {
      const before = users.calls;
      const r = await post1(server.url, "/problems.Users/create", { headers, body: JSON.stringify(BAD_USER) });
      assert.equal(r.status, 400, r.text());
      const body = r.json();
      assert.equal(body.code, "invalid_argument");
      assert.deepEqual(
        violationsOf(body).sort((x, y) => x.field.localeCompare(y.field)),
        [...EXPECTED].sort((x, y) => x.field.localeCompare(y.field)),
      );
      for (const v of EXPECTED) assert.ok(body.message.includes(v.description), `${v.field} not in the message: ${body.message}`);
      assert.match(body.message, /parameter #1 \(user\)\.address\.city is missing/);
      assert.equal(users.calls, before, "the handler ran");
    });
  }

  it("several parameters: a missing one, the constraints of the others", async () => {
    const r = await post1(server.url, "/problems.Users/pair", { headers: { "content-type": "application/json" }, body: JSON.stringify({ n: 11 }) });
    assert.equal(r.status, 400, r.text());
    const v = violationsOf(r.json()).map((x) => `${x.field} ${x.description}`);
    assert.deepEqual(v, ["a is missing", "n must be at most 10"]);
    assert.equal(r.json().status, 40);
  });

  for (const [way, headers, body] of [
    ["form", { "content-type": "application/x-www-form-urlencoded" }, "username=a&email=nope"],
    [
      "multipart",
      { "content-type": "multipart/form-data; boundary=b" },
      '--b\r\nContent-Disposition: form-data; name="username"\r\n\r\na\r\n--b\r\nContent-Disposition: form-data; name="email"\r\n\r\nnope\r\n--b--\r\n',
    ],
  ] as const) {
    it(`${way}: a missing field and the constraints of the others in one answer`, async () => {
      const r = await post1(server.url, "/problems.Users/signUp", { headers, body });
      assert.equal(r.status, 400, r.text());
      assert.deepEqual(
        violationsOf(r.json()).map((v) => `${v.field} ${v.description}`),
        [
          `age is missing: no ${way === "form" ? "form field" : "part"} named "age"`,
          "username must be at least 2 characters long",
          "email must be an email address",
        ],
      );
    });
  }

  it("a lone problem keeps its message as it was", async () => {
    const r = await post1(server.url, "/problems.Users/many", { headers: { "content-type": "application/json" }, body: '[[1, "two", 3]]' });
    assert.equal(r.status, 400);
    assert.equal(r.json().message, 'parameter #1 (xs)[1] must be a finite number, got string "two"');
    assert.deepEqual(violationsOf(r.json()), [{ field: "xs[1]", description: 'must be a finite number, got string "two"' }]);
  });

  it("a flood of bad values: binding stops at 100 problems, and says so", async () => {
    const body = JSON.stringify([Array.from({ length: 200_000 }, () => "x")]);
    const good = JSON.stringify([Array.from({ length: 200_000 }, () => 1)]);
    const many = (b: string) => post1(server.url, "/problems.Users/many", { headers: { "content-type": "application/json" }, body: b });
    const r = await many(body);
    assert.equal(r.status, 400);
    assert.equal(violationsOf(r.json()).length, 100);
    assert.match(r.json().message, /and \d+ more violations?; binding stopped after 100 problems$/);
    assert.ok(Buffer.byteLength(r.text()) < 64 * 1024, `error body of ${Buffer.byteLength(r.text())} bytes`);
    // Timed against 200,000 good numbers bound whole, back to back: binding that stops at 100
    // problems costs no more (a ratio, not a wall-clock bound).
    await assertWithin(
      3,
      "200,000 bad values against 200,000 good",
      async () => assert.equal((await many(body)).status, 400),
      async () => assert.equal((await many(good)).status, 200),
      2,
      20,
    );
  });
});
