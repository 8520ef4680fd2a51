import * as assert from "node:assert/strict";
import * as http2 from "node:http2";
import { after, before, describe, it } from "node:test";
import {
  Code,
  closeClient,
  createClient,
  createServer,
  describeService,
  Field,
  JavaClass,
  Method,
  Param,
  type RpcError,
  Service,
  T,
  type TripleServer,
} from "../../src/index.js";
import { fillDefaults } from "../../src/message/java-serialization.js";
import { messageCodec } from "../../src/message/message-codec.js";
import { decodeRequestWrapper, decodeResponseWrapper, encodeRequestWrapper } from "../../src/message/wrapper.js";
import { JAVA_CLASS, readHessian } from "../../src/serialization/hessian2/reader.js";
import { writeHessian } from "../../src/serialization/hessian2/writer.js";
import { javaTypeName } from "../../src/serialization/java-types.js";
import { frame, rawCall, servedSession } from "../grpc/raw.js";
import { hex, javaMissing, javaPeer, unhex } from "./peer.js";
import { AnonService, Anonymous, anonCalls, seen, User, UserService } from "./user-service.js";

const skip = javaMissing();

/** What HessianPeer's describe() prints for the sample User after greet(user, 3). */
const GREETED =
  "User{name=Ann,age=33,id=9007199254740993,score=9.75,active=true,born=Date(1700000000123),avatar=bytes[1, 2, -1]," +
  "tags=[String:a,String:é,String:😀],attrs={String:x=Integer:1,String:y=Integer:2000},friend=User{name=Bob!,age=-3,id=1099511627776,score=0.5,active=false," +
  "born=Date(0),avatar=null,tags=[String:a,String:é,String:😀],attrs=null,friend=null}}";

describe("hessian2 against Caucho Hessian (Java)", { skip }, () => {
  it("reads every compact form Java writes", () => {
    const [line] = javaPeer(["values"]);
    const got = new Map(line.split(";").map((kv) => kv.split(" ") as [string, string]));
    const read = (k: string) => readHessian(unhex(got.get(k)!));
    const expect: Record<string, unknown> = {
      int0: 0,
      int47: 47,
      intm16: -16,
      int2047: 2047,
      intm262144: -262144,
      intmax: 2147483647,
      long15: 15,
      longm2048: -2048,
      long262143: 262143,
      long2p31: 2147483648,
      longmin: -(2n ** 63n),
      d0: 0,
      d1: 1,
      d127: 127,
      dm32768: -32768,
      d1p5: 1.5,
      dpi: Math.PI,
      "d12.25": 12.25,
      str: "héllo 😀",
      t: true,
      n: null,
    };
    for (const [k, v] of Object.entries(expect)) assert.deepEqual(read(k), v, k);
    assert.equal(read("strlong"), "x".repeat(70000));
    assert.deepEqual(read("bin"), Buffer.from([0, 1, 2]));
    assert.deepEqual(read("binlong"), Buffer.alloc(70000));
    assert.equal((read("date") as Date).getTime(), 1700000000123);
    assert.equal((read("dateMin") as Date).getTime(), 1700000040000);
    assert.deepEqual(read("list"), [1, "two", 3.5]);
    assert.deepEqual(read("map"), { k: "v" });
    assert.deepEqual(read("intmap"), new Map([[1, "one"]]));
    assert.equal(read("char"), "c");
    // Caucho writes a lone Short/Byte/Float as a handle object, an enum as { name }: unwrapped for the declared type.
    assert.equal(fillDefaults(read("short"), T.int32), -5);
    assert.equal(fillDefaults(read("byte"), T.int32), 3);
    assert.equal(fillDefaults(read("float"), T.float), 1.5);
    assert.equal(fillDefaults(read("enum"), T.string), "NEW");
    assert.equal((read("enum") as Record<symbol, unknown>)[JAVA_CLASS], "java.lang.Thread$State");
    // java.math: a BigInteger field by field (signum, mag), a BigDecimal as hessian-lite writes it (its text).
    assert.equal(fillDefaults(read("bigint"), T.bigint), 123456789012345678901234567890n);
    assert.equal(fillDefaults(read("bignegint"), T.bigint), -340282366920938463463374607431768211457n);
    assert.equal(fillDefaults(read("bigsmall"), T.number), -42);
    assert.equal(fillDefaults(read("bigzero"), T.bigint), 0n);
    assert.equal(fillDefaults(read("bigint"), T.string), "123456789012345678901234567890");
    assert.equal(fillDefaults(read("bigdec"), T.string), "-12345678901234567890.125");
    assert.equal(fillDefaults(read("bigdec"), T.number), Number("-12345678901234567890.125"));
  });

  it("reads Java's POJO: class definitions, nested objects, a shared list by reference", () => {
    const [line] = javaPeer(["user"]);
    const u = readHessian(unhex(line)) as Record<string | symbol, any>;
    assert.equal(u[JAVA_CLASS], "org.example.User");
    assert.equal(u.name, "Ann");
    assert.equal(u.id, 9007199254740993n);
    assert.equal(u.friend[JAVA_CLASS], "org.example.User");
    assert.equal(u.friend.tags, u.tags, "the second occurrence is a reference to the same list");
    assert.deepEqual(u.tags, ["a", "é", "😀"]);
    assert.deepEqual(u.attrs, { x: 1, y: 2000 });
    assert.deepEqual(u.avatar, Buffer.from([1, 2, 255]));
  });

  it("Java reads what we write: values, and a typed object with class definition and references", () => {
    const user = Object.assign(new User(), {
      name: "Zoë",
      age: 41,
      id: 5n,
      score: 2.5,
      active: true,
      born: new Date(86400000),
      avatar: new Uint8Array([9]),
      tags: ["x"],
      attrs: new Map([["k", 70000]]),
    });
    user.friend = Object.assign(new User(), { name: "F", age: 1, id: -(2n ** 40n), score: -0.1, active: false, tags: user.tags });
    // java.math.BigInteger fields (T.bigInteger): written before the shared list, so its reference number depends on them.
    user.big = -(2n ** 100n) - 7n;
    user.friend.big = 0n;
    const userType = describeService(UserService).methods.find((m) => m.name === "greet")!.returns!;
    const userBytes = writeHessian(user, userType);
    // One class definition for both Users, the shared list written once and then referenced.
    assert.equal(userBytes.toString("latin1").split("org.example.User").length - 1, 1, "one class definition");
    const lines = javaPeer([
      `decode ${hex(userBytes)}`,
      `decode ${hex(writeHessian([1, -70000, 3000000000, 1.25, "s", null, true], T.array(T.any)))}`,
      `decode ${hex(writeHessian(`${"😀".repeat(20000)}é`, T.string))}`,
      `decode ${hex(writeHessian(new Uint8Array(40000).fill(7), T.bytes))}`,
      `decode ${hex(writeHessian(2n ** 62n, T.bigint))}`,
      `decode ${hex(writeHessian(123.456, T.number))}`,
      `decode ${hex(writeHessian(new Date(1700000000123), T.date))}`,
      `decode ${hex(writeHessian(new Map([["a", [1, 2]]]), T.map(T.array(T.int32))))}`,
    ]);
    assert.equal(
      lines[0],
      "User{name=Zoë,age=41,id=5,score=2.5,active=true,born=Date(86400000),avatar=bytes[9],tags=[String:x],attrs={String:k=Integer:70000}," +
        "friend=User{name=F,age=1,id=-1099511627776,score=-0.1,active=false,born=null,avatar=null,tags=[String:x],attrs=null,friend=null}}",
    );
    assert.equal(lines[1], "[Integer:1,Integer:-70000,Long:3000000000,Double:1.25,String:s,null,Boolean:true]");
    assert.equal(lines[2], `String:${"😀".repeat(20000)}é`);
    assert.match(lines[3], /^bytes\[7, 7, /);
    assert.equal(lines[4], `Long:${2n ** 62n}`);
    assert.equal(lines[5], "Double:123.456");
    assert.equal(lines[6], "Date(1700000000123)");
    assert.equal(lines[7], "{String:a=[Integer:1,Integer:2]}");
    assert.deepEqual(
      javaPeer([`shared ${hex(userBytes)}`]),
      [`friend.tags==tags:true big:${-(2n ** 100n) - 7n} friend.big:0`],
      "Java resolved our back-reference to the same list, and read both BigIntegers",
    );
    const bigs = [0n, 1n, -1n, 2n ** 31n, 2n ** 32n, -(2n ** 64n), 2n ** 255n - 1n, 10n ** 40n];
    assert.deepEqual(
      javaPeer(bigs.map((v) => `decode ${hex(writeHessian(v, T.bigInteger))}`)),
      bigs.map((v) => `BigInteger:${v}`),
    );
    for (const v of bigs) assert.equal(fillDefaults(readHessian(writeHessian(v, T.bigInteger)), T.bigInteger), v, "and we read it back");
  });

  it("Java reads the TripleRequestWrapper our hessian2 client sends, argument by argument", () => {
    const md = describeService(UserService).methods.find((m) => m.name === "greet")!;
    const u = Object.assign(new User(), { name: "Q", age: 7, id: 8n, score: 1.5, active: true });
    const bytes = messageCodec(md, "hessian2").encodeArgs([u, 2]);
    const [line] = javaPeer([`args ${hex(bytes)}`]);
    assert.equal(
      line,
      "hessian4 [org.example.User, int] User{name=Q,age=7,id=8,score=1.5,active=true,born=null,avatar=null,tags=null,attrs=null,friend=null} | Integer:2",
    );
  });

  it("reads a Java exception (its cause is itself) and our client turns it into an RpcError", () => {
    const [line] = javaPeer(["exception"]);
    const md = describeService(UserService).methods.find((m) => m.name === "greet")!;
    const codec = messageCodec(md, "hessian2");
    assert.throws(
      () => codec.decodeResponse(unhex(line)),
      (e: RpcError) => {
        assert.equal(e.code, Code.Unknown);
        assert.equal(e.message, "java.lang.IllegalStateException: no such user: 7");
        assert.equal(e.rawMessage, "no such user: 7");
        assert.equal((e.cause as { javaClass: string }).javaClass, "java.lang.IllegalStateException");
        return true;
      },
    );
  });
});

describe("a Java-made hessian4 TripleRequestWrapper against our server", { skip }, () => {
  const served = servedSession(() => [new UserService()]);

  it("reaches the method with the right values and types; Java decodes the TripleResponseWrapper", async () => {
    const [request] = javaPeer(["request"]);
    seen.length = 0;
    const r = await rawCall(served.session, "/org.example.UserService/greet", [frame(unhex(request))], {
      "content-type": "application/grpc+proto",
      "tri-consumer-appname": "java-consumer",
    });
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    const [user, times] = seen[0] as [User, number];
    assert.ok(user instanceof User);
    assert.ok(user.friend instanceof User);
    assert.equal(times, 33 - 30);
    assert.equal(typeof user.id, "bigint");
    assert.ok(user.born instanceof Date);
    assert.ok(user.attrs instanceof Map);
    assert.ok(user.avatar instanceof Uint8Array);
    const w = decodeResponseWrapper(r.messages[0].payload);
    assert.equal(w.serializeType, "hessian4");
    assert.equal(w.type, "org.example.User");
    const [decoded] = javaPeer([`response ${hex(r.messages[0].payload)}`]);
    assert.equal(decoded, `hessian4 org.example.User ${GREETED}`);
  });
});

describe("our client with serialization hessian2 against our server", () => {
  let server: TripleServer;
  let client: any;
  before(async () => {
    server = createServer({ services: [new UserService(), new AnonService()] });
    await server.listen({ port: 0 });
    client = createClient(UserService, { providers: [server.url], serialization: "hessian2", retries: 0 });
  });
  after(async () => {
    closeClient(client);
    await server.close();
  });

  it("unary: a class with every field type, both ways", async () => {
    const u = Object.assign(new User(), { name: "C", age: 1, id: 2n ** 60n, big: 3n ** 80n, score: 0.25, active: true, born: new Date(5), tags: ["t"] });
    u.friend = Object.assign(new User(), { name: "D", age: 2, id: 1n, score: 1, active: false });
    const back = await client.greet(u, 4);
    assert.ok(back instanceof User);
    assert.equal(back.age, 5);
    assert.equal(back.id, 2n ** 60n);
    assert.equal(back.big, 3n ** 80n);
    assert.equal(back.friend?.name, "D!");
    assert.equal(back.born?.getTime(), 5);
    assert.deepEqual(back.tags, ["t"]);
  });

  it("unary: lists of longs, dates, bytes; long results", async () => {
    assert.equal(await client.sum([1, 2, 3], new Date(Date.UTC(2024, 0, 1)), new Uint8Array(4)), 2024 + 6 + 4);
  });

  it("handler errors arrive with their code and message", async () => {
    await assert.rejects(client.echo("fail"), (e: RpcError) => e.code === Code.FailedPrecondition && e.message === "no such user: 7");
    assert.equal(await client.echo("still serving"), "still serving");
  });

  it("server streaming, client streaming and bidi wrap each message", async () => {
    const got: string[] = [];
    for await (const s of client.count(3) as unknown as AsyncIterable<string>) got.push(s);
    assert.deepEqual(got, ["#0", "#1", "#2"]);
    assert.equal(await (client.total as unknown as (xs: Iterable<number>) => Promise<number>)([1, 2, 39]), 42);
    const names: string[] = [];
    const users = [Object.assign(new User(), { name: "a", age: 1, id: 1n, score: 1, active: true })];
    for await (const u of (client.rename as unknown as (xs: Iterable<User>) => AsyncIterable<User>)(users)) names.push(u.name!);
    assert.deepEqual(names, ["a?"]);
  });

  it("a result class without @JavaClass: the server answers internal, naming it, before the handler runs", async () => {
    anonCalls.n = 0;
    const session = http2.connect(server.url);
    const r = await rawCall(
      session,
      "/org.example.AnonService/anonymous",
      [frame(encodeRequestWrapper({ serializeType: "hessian4", args: [writeHessian("n", T.string)], argTypes: ["java.lang.String"] }))],
      { "content-type": "application/grpc+proto" },
    );
    session.close();
    assert.equal(r.grpcStatus, Code.Internal);
    assert.match(decodeURIComponent(r.grpcMessage ?? ""), /Anonymous has no Java class name/);
    assert.equal(anonCalls.n, 0, "the handler did not run: its reply could not have been written");
  });

  it("argTypes and the response type as Dubbo Java writes them for each call kind", async () => {
    const methods = describeService(UserService).methods;
    const md = (name: string) => methods.find((m) => m.name === name)!;
    const argTypes = (name: string, encode: (c: ReturnType<typeof messageCodec>) => Uint8Array) =>
      decodeRequestWrapper(encode(messageCodec(md(name), "hessian2"))).argTypes;
    // Unary: each declared parameter's Class.getName().
    assert.deepEqual(
      argTypes("greet", (c) => c.encodeArgs([new User(), 1])),
      ["org.example.User", "int"],
    );
    assert.deepEqual(
      argTypes("sum", (c) => c.encodeArgs([[1], new Date(0), new Uint8Array(0)])),
      ["java.util.List", "java.util.Date", "[B"],
    );
    assert.equal(javaTypeName(T.bigInteger), "java.math.BigInteger");
    assert.equal(javaTypeName(T.bigint), "long");
    assert.equal(javaTypeName(T.bigint, true), "java.lang.Long");
    // Server stream `void count(int n, StreamObserver<String> out)`: the observer is a parameter too.
    assert.deepEqual(
      argTypes("count", (c) => c.encodeArgs([1])),
      ["int", "org.apache.dubbo.common.stream.StreamObserver"],
    );
    // Client and bidi streams `StreamObserver<Integer> total(StreamObserver<Integer> out)`: the type argument, boxed.
    assert.deepEqual(
      argTypes("total", (c) => c.encodeRequest(1)),
      ["java.lang.Integer"],
    );
    assert.deepEqual(
      argTypes("rename", (c) => c.encodeRequest(new User())),
      ["org.example.User"],
    );
    // Response types: a unary method's return type; a stream's element type, boxed.
    const session = http2.connect(server.url);
    const call = (name: string, arg: Buffer, argType: string) =>
      rawCall(session, `/org.example.UserService/${name}`, [frame(encodeRequestWrapper({ serializeType: "hessian4", args: [arg], argTypes: [argType] }))], {
        "content-type": "application/grpc+proto",
      });
    const total = await call("total", writeHessian(5, T.int32), "java.lang.Integer");
    const echo = await call("echo", writeHessian("x", T.string), "java.lang.String");
    session.close();
    assert.equal(total.grpcStatus, 0, total.grpcMessage);
    assert.equal(decodeResponseWrapper(total.messages[0].payload).type, "java.lang.Integer");
    assert.equal(decodeResponseWrapper(echo.messages[0].payload).type, "java.lang.String");
  });

  it("a service that names some classes for Java and not all is a registration error, naming the class", () => {
    @Service("org.example.MixedService")
    class MixedService {
      @Method({ returns: Anonymous })
      async lookup(@Param({ name: "user", type: User }) user: User): Promise<Anonymous> {
        return Object.assign(new Anonymous(), { name: user.name });
      }
    }
    assert.throws(
      () => createServer({ services: [new MixedService()] }),
      /org\.example\.MixedService\.lookup: class Anonymous has no Java class name: declare it with @JavaClass\("org\.example\.Anonymous"\)/,
    );
    // A service with no Java names at all registers (JSON and protobuf callers need none).
    createServer({ services: [new AnonService()] });
  });

  it("a class without @JavaClass is refused at client creation, naming it", () => {
    assert.throws(
      () => createClient(AnonService, { providers: "127.0.0.1:1", serialization: "hessian2" }),
      /Anonymous has no Java class name: declare it with @JavaClass/,
    );
  });
});

/** hessian-lite's java.time handle classes, field for field (hessian-lite is not packaged here: shapes from its source). */
const J8 = "com.alibaba.com.caucho.hessian.io.java8.";
@JavaClass(`${J8}LocalDateHandle`)
class LocalDateHandle {
  @Field(T.int32) year!: number;
  @Field(T.int32) month!: number;
  @Field(T.int32) day!: number;
}
@JavaClass(`${J8}LocalTimeHandle`)
class LocalTimeHandle {
  @Field(T.int32) hour!: number;
  @Field(T.int32) minute!: number;
  @Field(T.int32) second!: number;
  @Field(T.int32) nano!: number;
}
@JavaClass(`${J8}LocalDateTimeHandle`)
class LocalDateTimeHandle {
  @Field({ type: LocalDateHandle }) date!: LocalDateHandle;
  @Field({ type: LocalTimeHandle }) time!: LocalTimeHandle;
}
@JavaClass(`${J8}ZoneOffsetHandle`)
class ZoneOffsetHandle {
  @Field(T.int32) seconds!: number;
}
@JavaClass(`${J8}ZonedDateTimeHandle`)
class ZonedDateTimeHandle {
  @Field({ type: LocalDateTimeHandle }) dateTime!: LocalDateTimeHandle;
  @Field({ type: ZoneOffsetHandle }) offset!: ZoneOffsetHandle;
  @Field() zoneId!: string;
}
@JavaClass(`${J8}InstantHandle`)
class InstantHandle {
  @Field(T.int64) seconds!: number;
  @Field(T.int32) nanos!: number;
}

describe("hessian-lite's java.time handles", () => {
  const served = servedSession(() => [new UserService()]);
  const ldt = () =>
    Object.assign(new LocalDateTimeHandle(), {
      date: Object.assign(new LocalDateHandle(), { year: 2024, month: 2, day: 29 }),
      time: Object.assign(new LocalTimeHandle(), { hour: 23, minute: 5, second: 7, nano: 123456789 }),
    });
  const call = (method: string, args: Buffer[], argTypes: string[]) =>
    rawCall(served.session, `/org.example.UserService/${method}`, [frame(encodeRequestWrapper({ serializeType: "hessian4", args, argTypes }))], {
      "content-type": "application/grpc+proto",
    });

  it("local values bind as ISO text, instants (zoned, offset, Instant) as Date", async () => {
    const read = (v: unknown, t: Parameters<typeof fillDefaults>[1]) => fillDefaults(readHessian(writeHessian(v)), t);
    assert.equal(read(ldt(), T.string), "2024-02-29T23:05:07.123");
    assert.equal(read(ldt().date, T.string), "2024-02-29");
    assert.equal(read(ldt().time, T.string), "23:05:07.123");
    const zoned = Object.assign(new ZonedDateTimeHandle(), {
      dateTime: ldt(),
      offset: Object.assign(new ZoneOffsetHandle(), { seconds: 8 * 3600 }),
      zoneId: "Asia/Shanghai",
    });
    assert.equal((read(zoned, T.date) as Date).toISOString(), "2024-02-29T15:05:07.123Z");
    const instant = Object.assign(new InstantHandle(), { seconds: 1700000000, nanos: 5000000 });
    assert.equal((read(instant, T.date) as Date).getTime(), 1700000000005);
    // Out of Date's range: left as the object, which a Date parameter then refuses.
    const far = Object.assign(new InstantHandle(), { seconds: 9e15, nanos: 0 });
    assert.ok(!((read(far, T.date) as object) instanceof Date));
  });

  it("through the wrapper: a ZonedDateTime for a Date parameter, a LocalDateTime for a string", async () => {
    const zoned = Object.assign(new ZonedDateTimeHandle(), {
      dateTime: ldt(),
      offset: Object.assign(new ZoneOffsetHandle(), { seconds: -5 * 3600 }),
      zoneId: "America/New_York",
    });
    seen.length = 0;
    const r = await call(
      "sum",
      [writeHessian([1], T.array(T.int64)), writeHessian(zoned), writeHessian(new Uint8Array(0), T.bytes)],
      ["java.util.List", "java.time.ZonedDateTime", "[B"],
    );
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    assert.equal(((seen[0] as unknown[])[1] as Date).toISOString(), "2024-03-01T04:05:07.123Z");
    const e = await call("echo", [writeHessian(ldt())], ["java.time.LocalDateTime"]);
    assert.equal(e.grpcStatus, 0, e.grpcMessage);
    assert.equal(readHessian(decodeResponseWrapper(e.messages[0].payload).data), "2024-02-29T23:05:07.123");
  });
});

describe("bad hessian2 input", () => {
  const served = servedSession(() => [new UserService()]);

  const call = (arg: Buffer) =>
    rawCall(
      served.session,
      "/org.example.UserService/echo",
      [frame(encodeRequestWrapper({ serializeType: "hessian4", args: [arg], argTypes: ["java.lang.String"] }))],
      {
        "content-type": "application/grpc+proto",
      },
    );

  const bomb = (): Buffer => {
    // 20,000 class definitions of 200 fields each, then one object
    const fields = Buffer.concat(Array.from({ length: 200 }, (_, i) => Buffer.from([0x02, 0x66, 0x30 + (i % 10)])));
    const def = Buffer.concat([Buffer.from([0x43, 0x01, 0x58, 0xc8, 200]), fields]);
    return Buffer.concat([...Array.from({ length: 2000 }, () => def), Buffer.from([0x60])]);
  };

  /** Billion laughs by reference: 31 lists, each holding the previous one twice (2^30 values once expanded). */
  const laughs = (): Buffer => {
    const parts = [Buffer.from([0x58, 0x90 + 31, 0x7a, 0x4e, 0x4e])];
    for (let i = 2; i <= 31; i++) parts.push(Buffer.from([0x7a, 0x51, 0x90 + i - 1, 0x51, 0x90 + i - 1]));
    return Buffer.concat(parts);
  };

  const cases: [string, Buffer, RegExp][] = [
    ["reference amplification", laughs(), /more than 1000000 values/],
    ["truncated string", Buffer.from([0x05, 0x61]), /5 bytes announced/],
    ["truncated long", Buffer.from([0x4c, 0, 0]), /8 bytes announced/],
    ["huge string length", Buffer.from([0x53, 0xff, 0xff, 0x61]), /65535 bytes announced/],
    ["huge list length", Buffer.from([0x58, 0x49, 0x7f, 0xff, 0xff, 0xff]), /2147483647 bytes announced/],
    ["deep nesting", Buffer.concat([Buffer.alloc(100000, 0x79), Buffer.from([0x4e])]), /nested deeper than 64/],
    ["reference loop", Buffer.from([0x79, 0x51, 0x90]), /loops back/],
    ["reference to nothing", Buffer.from([0x51, 0x95]), /reference 5 to nothing/],
    ["object of an undefined class", Buffer.from([0x61]), /undefined class #1/],
    ["class definition bomb", bomb(), /truncated|undefined class|fields/],
    ["trailing bytes", Buffer.from([0x01, 0x61, 0x4e]), /1 bytes after the value/],
    ["bad UTF-8", Buffer.from([0x01, 0xff]), /bad UTF-8/],
    // 20,000 empty class definitions before one value (3 bytes each): read in a loop, not one stack frame each.
    ["class definition chain", Buffer.concat([Buffer.from("C\x00\x90".repeat(20000), "latin1"), Buffer.from([0x01, 0xff])]), /bad UTF-8/],
    // A class definition where its field count (an int) is expected, 10,000 times over.
    ["class definition as a field count", Buffer.concat([Buffer.from("C\x00".repeat(10000), "latin1"), Buffer.from([0x90])]), /an int expected/],
  ];
  for (const [name, arg, msg] of cases) {
    it(`${name}: invalid_argument`, async () => {
      const r = await call(arg);
      assert.equal(r.grpcStatus, Code.InvalidArgument, `${name}: ${r.grpcMessage}`);
      assert.match(decodeURIComponent(r.grpcMessage ?? ""), msg);
    });
  }

  it("a Java server-streaming call (its argTypes name the StreamObserver too) gets one TripleResponseWrapper per message", async () => {
    const req = encodeRequestWrapper({
      serializeType: "hessian4",
      args: [writeHessian(2, T.int32)],
      argTypes: ["int", "org.apache.dubbo.common.stream.StreamObserver"],
    });
    const r = await rawCall(served.session, "/org.example.UserService/count", [frame(req)], { "content-type": "application/grpc+proto" });
    assert.equal(r.grpcStatus, 0, r.grpcMessage);
    const got = r.messages.map((m) => decodeResponseWrapper(m.payload));
    assert.deepEqual(
      got.map((w) => [w.serializeType, w.type, readHessian(w.data)]),
      [
        ["hessian4", "java.lang.String", "#0"],
        ["hessian4", "java.lang.String", "#1"],
      ],
    );
  });

  it("unknown class names bind like any object: a wrong type is invalid_argument, the server keeps serving", async () => {
    // An org.example.Nope object where a String is declared.
    const nope = Buffer.from([0x43, 0x10, ...Buffer.from("org.example.Nope"), 0x91, 0x01, 0x61, 0x60, 0x01, 0x62]);
    const r = await call(nope);
    assert.equal(r.grpcStatus, Code.InvalidArgument);
    const ok = await call(writeHessian("fine", T.string));
    assert.equal(ok.grpcStatus, 0, ok.grpcMessage);
    assert.equal(readHessian(decodeResponseWrapper(ok.messages[0].payload).data), "fine");
  });
});
