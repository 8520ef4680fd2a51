import { type CallContext, Code, Ctx, Field, JavaClass, Method, Param, RpcError, Service, T, unimplemented } from "../../src/index.js";

/**
 * The TypeScript side of test/java/dubbo/org/triplerpc/interop: the same classes and interface,
 * field for field and method for method, so our server and client meet the Java programs.
 */

/** org.triplerpc.interop.Address */
@JavaClass("org.triplerpc.interop.Address")
export class Address {
  @Field({ optional: true }) city?: string;
  @Field(T.int32) zip!: number;
}

/** org.triplerpc.interop.Person: every kind of field (Java int, long, double, boolean, Integer, Date, List, Map, nested classes). */
@JavaClass("org.triplerpc.interop.Person")
export class Person {
  @Field({ optional: true }) name?: string;
  @Field(T.int32) age!: number;
  @Field() id!: bigint;
  @Field() score!: number;
  @Field() active!: boolean;
  @Field({ type: T.int32, optional: true }) rank?: number;
  @Field({ optional: true }) born?: Date;
  @Field({ type: [String], optional: true }) tags?: string[];
  @Field({ type: T.map(T.int32), optional: true }) attrs?: Map<string, number>;
  @Field({ type: Address, optional: true }) address?: Address;
  @Field({ type: [Address], optional: true }) places?: Address[];
  @Field({ type: Person, optional: true }) friend?: Person;
}

/** A server or client logger that prints nothing (the tests provoke errors on purpose). */
export const QUIET = { info() {}, warn() {}, error() {} };

const address = (city: string, zip: number): Address => Object.assign(new Address(), { city, zip });

/** The same person as Samples.person() in Java. */
export function samplePerson(): Person {
  const friend = Object.assign(new Person(), {
    name: "Bob", age: -(2 ** 31), id: -(2n ** 63n), score: -0.5, active: false, rank: 7,
    born: new Date(-86400000 * 365 * 30), attrs: new Map(), places: [],
  });
  return Object.assign(new Person(), {
    name: "Ann", age: 33, id: 9007199254740993n, score: 9.75, active: true,
    born: new Date(1700000000123), tags: ["a", "é", "😀"], attrs: new Map([["x", 1], ["y", -2000000000]]),
    address: address("Zürich", 8001), places: [address("Lyon", 69001), address("", 0)], friend,
  });
}

/** What echo() answers, on both sides: age + 1, name + "!", the friend's name + "?". */
export function echoed(p: Person): Person {
  p.age += 1;
  p.name = `${p.name}!`;
  if (p.friend) p.friend.name = `${p.friend.name}?`;
  return p;
}

/** A deep copy that keeps classes (structuredClone makes plain objects of them). */
export function copy<V>(v: V): V {
  if (v instanceof Date) return new Date(v.getTime()) as V;
  if (v instanceof Map) return new Map([...v].map(([k, x]) => [k, copy(x)])) as V;
  if (Array.isArray(v)) return v.map(copy) as V;
  if (typeof v !== "object" || v === null) return v;
  const out = Object.create(Object.getPrototypeOf(v)) as Record<string, unknown>;
  for (const [k, x] of Object.entries(v)) out[k] = copy(x);
  return out as V;
}

/** org.triplerpc.interop.Interop, as a contract: our client calls the Java provider with it. */
@Service("org.triplerpc.interop.Interop")
export class Interop {
  @Method({ returns: String })
  hello(@Param("name") _name: string): Promise<string> {
    return unimplemented();
  }

  @Method({ returns: Person })
  echo(@Param({ name: "p", type: Person }) _p: Person): Promise<Person> {
    return unimplemented();
  }

  @Method({ returns: String })
  describe(@Param({ name: "p", type: Person }) _p: Person): Promise<string> {
    return unimplemented();
  }

  @Method({ returns: Person })
  sample(): Promise<Person> {
    return unimplemented();
  }

  @Method({ returns: T.bigint })
  mix(
    @Param({ name: "i", type: T.int32 }) _i: number,
    @Param("l") _l: bigint,
    @Param("d") _d: number,
    @Param("b") _b: boolean,
    @Param({ name: "s", type: String, optional: true }) _s: string | undefined,
  ): Promise<bigint> {
    return unimplemented();
  }

  @Method({ returns: T.map(T.bigint) })
  index(@Param({ name: "ps", type: [Person] }) _ps: Person[]): Promise<Map<string, bigint>> {
    return unimplemented();
  }

  @Method({ returns: String })
  fail(@Param("kind") _kind: string): Promise<string> {
    return unimplemented();
  }

  @Method({ returns: String })
  slow(@Param({ name: "ms", type: T.int32 }) _ms: number, @Ctx() _ctx: CallContext): Promise<string> {
    return unimplemented();
  }

  @Method({ returns: String })
  attachment(@Param("key") _key: string, @Ctx() _ctx: CallContext): Promise<string> {
    return unimplemented();
  }

  @Method({ returns: String })
  whoami(): Promise<string> {
    return unimplemented();
  }

  @Method({ kind: "server_streaming", returns: String })
  count(@Param({ name: "n", type: T.int32 }) _n: number): AsyncIterable<string> {
    return unimplemented();
  }

  @Method({ kind: "client_streaming", returns: T.int32 })
  total(@Param({ name: "xs", type: T.int32 }) _xs: AsyncIterable<number>): Promise<number> {
    return unimplemented();
  }

  @Method({ kind: "bidi_streaming", returns: Person })
  rename(@Param({ name: "ps", type: Person }) _ps: AsyncIterable<Person>): AsyncIterable<Person> {
    return unimplemented();
  }
}

/** What our provider's handlers saw, for the tests to check. */
export interface Seen {
  echo: Person[];
  slow: { remainingMs: number | undefined; aborted: string | undefined }[];
  headers: Record<string, string | undefined>[];
}

/** Our provider of the interface, for the Java consumer; `tag` tells registrations apart. */
export class InteropProvider extends Interop {
  constructor(
    private readonly tag: string,
    readonly seen: Seen = { echo: [], slow: [], headers: [] },
  ) {
    super();
  }

  override async hello(name: string): Promise<string> {
    return `hello ${name} from ${this.tag}`;
  }

  override async echo(p: Person): Promise<Person> {
    this.seen.echo.push(p);
    return echoed(copy(p));
  }

  override async describe(p: Person): Promise<string> {
    return `${p.name} (${p.constructor.name})`;
  }

  override async sample(): Promise<Person> {
    return samplePerson();
  }

  override async mix(i: number, l: bigint, d: number, b: boolean, s: string | undefined): Promise<bigint> {
    return BigInt(i) + l + BigInt(Math.trunc(d)) + (b ? 1n : 0n) + BigInt(s === undefined ? -1 : s.length);
  }

  override async index(ps: Person[]): Promise<Map<string, bigint>> {
    return new Map(ps.map((p) => [p.name ?? "", p.id]));
  }

  override async fail(kind: string): Promise<string> {
    if (kind === "plain") throw new Error("a plain Error");
    const code = Code[kind as keyof typeof Code];
    if (typeof code !== "number") return `no failure: ${kind}`;
    throw new RpcError(code, `failing with ${kind}`);
  }

  override async slow(ms: number, c: CallContext): Promise<string> {
    const entry = { remainingMs: c.deadline === undefined ? undefined : c.deadline - Date.now(), aborted: undefined as string | undefined };
    this.seen.slow.push(entry);
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, ms);
      c.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        entry.aborted = (c.signal.reason as RpcError).code === Code.DeadlineExceeded ? "deadline_exceeded" : String(c.signal.reason);
        resolve();
      });
    });
    return `timeout=${entry.remainingMs ?? "none"}`;
  }

  override async attachment(key: string, c: CallContext): Promise<string> {
    const v = c.requestHeaders.get(key);
    this.seen.headers.push({ [key]: v });
    c.responseTrailers.set("x-reply", `ts saw ${v}`);
    return String(v);
  }

  override async whoami(): Promise<string> {
    return this.tag;
  }

  override async *count(n: number): AsyncIterable<string> {
    for (let i = 0; i < n; i++) yield `#${i}`;
  }

  override async total(xs: AsyncIterable<number>): Promise<number> {
    let t = 0;
    for await (const x of xs) t += x;
    return t;
  }

  override async *rename(ps: AsyncIterable<Person>): AsyncIterable<Person> {
    for await (const p of ps) {
      p.name = `${p.name}?`;
      yield p;
    }
  }
}

/** Describe.of(p) of the Java programs, for a Person as our side holds it: what Java prints for the same value. */
export function javaView(p: Person | Address | undefined | null): string {
  if (p === undefined || p === null) return "null";
  if (p instanceof Address) return `Address{city=${str(p.city)},zip=${p.zip}}`;
  const list = <T>(xs: T[] | undefined, f: (x: T) => string) => (xs ? `[${xs.map(f).join(",")}]` : "null");
  const attrs = p.attrs
    ? `{${[...p.attrs].map(([k, v]) => [str(k), `Integer:${v}`]).sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, v]) => `${k}=${v}`).join(", ")}}`
    : "null";
  return (
    `Person{name=${str(p.name)},age=${p.age},id=${p.id},score=${javaDouble(p.score)},active=${p.active},` +
    `rank=${p.rank === undefined ? "null" : `Integer:${p.rank}`},born=${p.born ? `Date(${p.born.getTime()})` : "null"},` +
    `tags=${list(p.tags, str)},attrs=${attrs},address=${javaView(p.address)},places=${list(p.places, javaView)},friend=${javaView(p.friend)}}`
  );
}

const str = (s: string | undefined): string => (s === undefined ? "null" : `String:${s}`);
/** Java's Double.toString for the values the tests use (always a fraction part). */
const javaDouble = (d: number): string => (Number.isInteger(d) ? `${d}.0` : String(d));
