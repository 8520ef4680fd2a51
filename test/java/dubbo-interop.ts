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

/** org.triplerpc.interop.Color */
const COLOR = T.enum("org.triplerpc.interop.Color", ["RED", "GREEN", "BLUE"]);

/** org.triplerpc.interop.JavaTypes: decimals, java.time, enums, small numbers, Java collections, primitive arrays. */
@JavaClass("org.triplerpc.interop.JavaTypes")
export class JavaTypes {
  @Field({ type: T.bigDecimal, optional: true }) dec?: string;
  @Field({ type: T.array(T.bigDecimal), optional: true }) decs?: string[];
  @Field({ type: T.map(T.bigDecimal), optional: true }) decMap?: Map<string, string>;
  @Field({ type: T.localDate, optional: true }) date?: string;
  @Field({ type: T.localTime, optional: true }) time?: string;
  @Field({ type: T.localDateTime, optional: true }) dateTime?: string;
  @Field({ type: T.instant, optional: true }) instant?: string;
  @Field({ type: T.offsetDateTime, optional: true }) offsetDateTime?: string;
  @Field({ type: T.zonedDateTime, optional: true }) zoned?: string;
  @Field({ type: T.duration, optional: true }) duration?: string;
  @Field({ type: T.timestamp, optional: true }) timestamp?: string;
  @Field({ type: COLOR, optional: true }) color?: string;
  @Field({ type: T.array(COLOR), optional: true }) colors?: string[];
  @Field(T.short) s!: number;
  @Field({ type: T.short, optional: true }) sBox?: number;
  @Field(T.byte) b!: number;
  @Field({ type: T.byte, optional: true }) bBox?: number;
  @Field({ type: T.float, optional: true }) fBox?: number;
  @Field(T.char) c!: string;
  @Field({ type: T.char, optional: true }) cBox?: string;
  @Field({ type: T.set(String), optional: true }) set?: string[];
  @Field({ type: T.treeMap(T.int32), optional: true }) tree?: Map<string, number>;
  @Field({ type: T.linkedHashMap(T.bigint), optional: true }) linked?: Map<string, bigint>;
  @Field({ type: T.javaArray(T.int32), optional: true }) ints?: number[];
  @Field({ type: T.javaArray(T.bigint), optional: true }) longs?: bigint[];
  @Field({ type: T.javaArray(T.double), optional: true }) doubles?: number[];
  @Field({ type: T.javaArray(T.float), optional: true }) floats?: number[];
  @Field({ type: T.javaArray(T.short), optional: true }) shorts?: number[];
  @Field({ type: T.javaArray(T.boolean), optional: true }) bools?: boolean[];
  @Field({ type: T.map(Address), optional: true }) addrs?: Map<string, Address>;
  @Field({ type: T.array(T.localDate), optional: true }) dates?: string[];
  @Field({ type: T.set(String), optional: true }) noSet?: string[];
}

/** The same values as TypeSamples.types() in Java, in Java's toString forms. */
export function sampleTypes(): JavaTypes {
  return Object.assign(new JavaTypes(), {
    dec: "-12345678901234567890.12345678901234567890",
    decs: ["1.10", "0", "1E+3", "-0.000001", "1E-7"],
    decMap: new Map([
      ["a", "3.14159"],
      ["zero", "0.00"],
    ]),
    date: "1969-12-31",
    time: "10:15:30.123456789",
    dateTime: "2101-01-02T03:04:05.000000006",
    instant: "1969-12-31T23:59:59.000000005Z",
    offsetDateTime: "2024-03-31T02:30:00.000000001+02:00",
    zoned: "2024-03-31T03:30+02:00[Europe/Berlin]",
    duration: "PT-4.9999997S",
    timestamp: "1900-01-01T00:00:00.123Z",
    color: "GREEN",
    colors: ["RED", "BLUE"],
    s: -32768,
    b: -128,
    bBox: 127,
    fBox: -0.25,
    c: "é",
    cBox: "x",
    set: ["b", "a"],
    tree: new Map([
      ["b", 2],
      ["a", 1],
    ]),
    linked: new Map([
      ["z", -(2n ** 63n)],
      ["a", 2n],
    ]),
    ints: [-(2 ** 31), 0, 2 ** 31 - 1],
    longs: [-(2n ** 63n), 2n ** 63n - 1n],
    doubles: [0.5, -1],
    floats: [2.5],
    shorts: [-1, 300],
    bools: [true, false],
    addrs: new Map([["home", address("Zürich", 8001)]]),
    dates: [],
  });
}

/** TypeSamples.describe(t) of the Java programs, for a JavaTypes as our side holds it. */
export function typesView(t: JavaTypes): string {
  const v = (cls: string, x: unknown) => (x === undefined || x === null ? "null" : `${cls}:${x}`);
  const list = (cls: string, xs: unknown[] | undefined) => (xs ? `[${xs.map((x) => v(cls, x)).join(",")}]` : "null");
  const arr = (xs: unknown[] | undefined, f: (x: never) => string = String) => (xs ? `[${xs.map((x) => f(x as never)).join(", ")}]` : "null");
  const entries = (m: Map<string, unknown> | undefined, f: (x: never) => string, sort: boolean) =>
    m
      ? `{${[...m]
          .sort(([a], [b]) => (sort ? (a < b ? -1 : 1) : 0))
          .map(([k, x]) => `${k}=${f(x as never)}`)
          .join(", ")}}`
      : "null";
  const set = (xs: string[] | undefined) => (xs ? `HashSet:[${[...xs].sort().join(", ")}]` : "null");
  return [
    `dec=${v("BigDecimal", t.dec)}`,
    `decs=${list("BigDecimal", t.decs)}`,
    `decMap=${entries(t.decMap, (x) => v("BigDecimal", x), true)}`,
    `date=${v("LocalDate", t.date)}`,
    `time=${v("LocalTime", t.time)}`,
    `dateTime=${v("LocalDateTime", t.dateTime)}`,
    `instant=${v("Instant", t.instant)}`,
    `offsetDateTime=${v("OffsetDateTime", t.offsetDateTime)}`,
    `zoned=${v("ZonedDateTime", t.zoned)}`,
    `duration=${v("Duration", t.duration)}`,
    `timestamp=${v("Timestamp", t.timestamp)}`,
    `color=${v("Color", t.color)}`,
    `colors=${list("Color", t.colors)}`,
    `s=${t.s}`,
    `sBox=${v("Short", t.sBox)}`,
    `b=${t.b}`,
    `bBox=${v("Byte", t.bBox)}`,
    `fBox=${t.fBox === undefined ? "null" : `Float:${javaDouble(t.fBox)}`}`,
    `c=${t.c}`,
    `cBox=${v("Character", t.cBox)}`,
    `set=${set(t.set)}`,
    `tree=${t.tree ? `TreeMap:${entries(t.tree, String, true)}` : "null"}`,
    `linked=${t.linked ? `LinkedHashMap:${entries(t.linked, String, false)}` : "null"}`,
    `ints=${arr(t.ints)}`,
    `longs=${arr(t.longs)}`,
    `doubles=${arr(t.doubles, javaDouble)}`,
    `floats=${arr(t.floats, javaDouble)}`,
    `shorts=${arr(t.shorts)}`,
    `bools=${arr(t.bools)}`,
    `addrs=${t.addrs ? `{${[...t.addrs].map(([k, a]) => `String:${k}=${javaView(a)}`).join(", ")}}` : "null"}`,
    `dates=${list("LocalDate", t.dates)}`,
    `noSet=${set(t.noSet)}`,
  ].join(";");
}

/** The params() answer for sampleTypes(): each value as Java's toString writes it, joined by "|". */
export function paramsView(t: JavaTypes): string {
  return [t.dec, t.date, t.time, t.dateTime, t.instant, t.offsetDateTime, t.zoned, t.duration, t.timestamp, t.color, t.s, t.b, t.c, javaDouble(1.5)].join("|");
}

/** A server or client logger that prints nothing (the tests provoke errors on purpose). */
export const QUIET = { info() {}, warn() {}, error() {} };

const address = (city: string, zip: number): Address => Object.assign(new Address(), { city, zip });

/** The same person as Samples.person() in Java. */
export function samplePerson(): Person {
  const friend = Object.assign(new Person(), {
    name: "Bob",
    age: -(2 ** 31),
    id: -(2n ** 63n),
    score: -0.5,
    active: false,
    rank: 7,
    born: new Date(-86400000 * 365 * 30),
    attrs: new Map(),
    places: [],
  });
  return Object.assign(new Person(), {
    name: "Ann",
    age: 33,
    id: 9007199254740993n,
    score: 9.75,
    active: true,
    born: new Date(1700000000123),
    tags: ["a", "é", "😀"],
    attrs: new Map([
      ["x", 1],
      ["y", -2000000000],
    ]),
    address: address("Zürich", 8001),
    places: [address("Lyon", 69001), address("", 0)],
    friend,
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

  @Method({ returns: JavaTypes })
  types(@Param({ name: "t", type: JavaTypes }) _t: JavaTypes): Promise<JavaTypes> {
    return unimplemented();
  }

  @Method({ returns: JavaTypes })
  typesSample(): Promise<JavaTypes> {
    return unimplemented();
  }

  @Method({ returns: String })
  typesDescribe(@Param({ name: "t", type: JavaTypes }) _t: JavaTypes): Promise<string> {
    return unimplemented();
  }

  @Method({ returns: String })
  params(
    @Param({ name: "d", type: T.bigDecimal }) _d: string,
    @Param({ name: "ld", type: T.localDate }) _ld: string,
    @Param({ name: "lt", type: T.localTime }) _lt: string,
    @Param({ name: "ldt", type: T.localDateTime }) _ldt: string,
    @Param({ name: "i", type: T.instant }) _i: string,
    @Param({ name: "o", type: T.offsetDateTime }) _o: string,
    @Param({ name: "z", type: T.zonedDateTime }) _z: string,
    @Param({ name: "du", type: T.duration }) _du: string,
    @Param({ name: "ts", type: T.timestamp }) _ts: string,
    @Param({ name: "c", type: COLOR }) _c: string,
    @Param({ name: "s", type: T.short }) _s: number,
    @Param({ name: "b", type: T.byte }) _b: number,
    @Param({ name: "ch", type: T.char }) _ch: string,
    @Param({ name: "f", type: T.float }) _f: number,
  ): Promise<string> {
    return unimplemented();
  }

  @Method({ returns: T.bigDecimal })
  addDecimal(@Param({ name: "a", type: T.bigDecimal }) _a: string, @Param({ name: "b", type: T.bigDecimal }) _b: string): Promise<string> {
    return unimplemented();
  }

  @Method({ returns: T.zonedDateTime })
  later(@Param({ name: "z", type: T.zonedDateTime }) _z: string, @Param({ name: "d", type: T.duration }) _d: string): Promise<string> {
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
  types?: JavaTypes[];
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

  override async types(t: JavaTypes): Promise<JavaTypes> {
    this.seen.types?.push(t);
    return t;
  }

  override async typesSample(): Promise<JavaTypes> {
    return sampleTypes();
  }

  override async typesDescribe(t: JavaTypes): Promise<string> {
    return typesView(t);
  }

  override async params(
    ...args: [string, string, string, string, string, string, string, string, string, string, number, number, string, number]
  ): Promise<string> {
    return args.map((x, i) => (i === 13 ? javaDouble(x as number) : String(x))).join("|");
  }

  override async addDecimal(a: string, b: string): Promise<string> {
    return decimalAdd(a, b);
  }

  override async later(z: string, d: string): Promise<string> {
    // Only what the tests send: a whole number of hours across Europe/Berlin's spring change.
    const m = /^(\d{4}-\d\d-\d\d)T(\d\d):(\d\d)\+01:00\[Europe\/Berlin\]$/.exec(z);
    const h = /^PT(\d+)H$/.exec(d);
    if (!m || !h) throw new RpcError(Code.Unimplemented, "later: only the test's values");
    const hour = Number(m[2]) + Number(h[1]);
    return hour >= 2
      ? `${m[1]}T${String(hour + 1).padStart(2, "0")}:${m[3]}+02:00[Europe/Berlin]`
      : `${m[1]}T${String(hour).padStart(2, "0")}:${m[3]}+01:00[Europe/Berlin]`;
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
    ? `{${[...p.attrs]
        .map(([k, v]) => [str(k), `Integer:${v}`])
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .map(([k, v]) => `${k}=${v}`)
        .join(", ")}}`
    : "null";
  return (
    `Person{name=${str(p.name)},age=${p.age},id=${p.id},score=${javaDouble(p.score)},active=${p.active},` +
    `rank=${p.rank === undefined ? "null" : `Integer:${p.rank}`},born=${p.born ? `Date(${p.born.getTime()})` : "null"},` +
    `tags=${list(p.tags, str)},attrs=${attrs},address=${javaView(p.address)},places=${list(p.places, javaView)},friend=${javaView(p.friend)}}`
  );
}

/** a + b of two decimal texts (with or without an exponent), with the larger scale (BigDecimal.add; the tests' scales are not negative). */
function decimalAdd(a: string, b: string): string {
  const parse = (x: string) => {
    const [m, e = "0"] = x.toUpperCase().split("E");
    const [i, f = ""] = m.split(".");
    return { u: BigInt(i + f), s: Math.max(0, f.length - Number(e)) * 1 };
  };
  const x = parse(a);
  const y = parse(b);
  const s = Math.max(x.s, y.s);
  const u = x.u * 10n ** BigInt(s - x.s) + y.u * 10n ** BigInt(s - y.s);
  const neg = u < 0n;
  const d = (neg ? -u : u).toString().padStart(s + 1, "0");
  return `${neg ? "-" : ""}${s ? `${d.slice(0, d.length - s)}.${d.slice(d.length - s)}` : d}`;
}

const str = (s: string | undefined): string => (s === undefined ? "null" : `String:${s}`);
/** Java's Double.toString for the values the tests use (always a fraction part). */
const javaDouble = (d: number): string => (Number.isInteger(d) ? `${d}.0` : String(d));
