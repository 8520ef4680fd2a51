/**
 * Type-level tests of the decorators, checked by `npm run typecheck` (never run): what compiles,
 * and with `// @ts-expect-error` what must not (an unused expectation is itself an error, so each
 * one proves the compiler refuses that line). The repository compiles with experimentalDecorators,
 * so decorator syntax here takes the legacy path; the standard (TC39) signatures are called by
 * hand with a context. test/compilers compiles the same rules under tsc 5 and 7 both ways.
 */
import { Ctx, Field, Method, Param, Service, T, type ParamsCheck, type TypeOf, type ValueOf } from "../../src/index.js";
import { Download, StreamedFile, InMemoryFile } from "../../src/index.js";

/** True when A and B are the same type (not merely assignable). */
type Equal<A, B> = (<X>() => X extends A ? 1 : 2) extends <X>() => X extends B ? 1 : 2 ? true : false;
/** Compiles only when its type argument is `true`. */
function expectTrue<_ extends true>(): void {}

// --- What each type spec binds as (ValueOf) -------------------------------------------------
class Pet {
  @Field(String) name!: string;
}
expectTrue<Equal<ValueOf<StringConstructor>, string>>();
expectTrue<Equal<ValueOf<NumberConstructor>, number>>();
expectTrue<Equal<ValueOf<BooleanConstructor>, boolean>>();
expectTrue<Equal<ValueOf<BigIntConstructor>, bigint>>();
expectTrue<Equal<ValueOf<DateConstructor>, Date>>();
expectTrue<Equal<ValueOf<MapConstructor>, Map<string, string>>>();
expectTrue<Equal<ValueOf<ObjectConstructor>, any>>();
expectTrue<Equal<ValueOf<typeof Pet>, Pet>>();
expectTrue<Equal<ValueOf<readonly [typeof Pet]>, Pet[]>>();
expectTrue<Equal<ValueOf<typeof InMemoryFile>, InMemoryFile>>();
expectTrue<Equal<ValueOf<typeof StreamedFile>, StreamedFile>>();
expectTrue<Equal<ValueOf<typeof Download>, Download>>();
expectTrue<Equal<ValueOf<typeof T.localDate>, string>>();
expectTrue<Equal<ValueOf<typeof T.bigDecimal>, string>>();
expectTrue<Equal<ValueOf<typeof T.int64>, number>>();
expectTrue<Equal<ValueOf<typeof T.bigInteger>, bigint>>();
expectTrue<Equal<ValueOf<typeof T.bytes>, Uint8Array>>();
expectTrue<Equal<ValueOf<typeof T.any>, any>>();
expectTrue<Equal<typeof T.string, TypeOf<string>>>();
const colors = T.enum("org.example.Color", ["RED", "GREEN"]);
expectTrue<Equal<ValueOf<typeof colors>, "RED" | "GREEN">>();
const scores = T.record(T.int32);
expectTrue<Equal<ValueOf<typeof scores>, Record<string, number>>>();
const longs = T.javaArray(T.int64);
expectTrue<Equal<ValueOf<typeof longs>, number[]>>();
const petsById = T.treeMap(Pet);
expectTrue<Equal<ValueOf<typeof petsById>, Map<string, Pet>>>();
const names = T.set(String);
expectTrue<Equal<ValueOf<typeof names>, string[]>>();
// A bare Array (no element type) fits no parameter.
expectTrue<Equal<ParamsCheck<readonly [ArrayConstructor], [string[]]> extends void ? true : false, false>>();

// --- @Method({ params }): the typed form, legacy decorators --------------------------------
@Service("types.Typed")
export class Typed {
  @Method({ params: [String, Number] })
  async a(name: string, n: number): Promise<string> {
    return name + n;
  }

  @Method({ params: [{ context: true }, { name: "pets", type: [Pet] }, { name: "note", type: String, optional: true }] })
  async b(_ctx: unknown, pets: Pet[], note?: string): Promise<string> {
    return pets.map((p) => p.name).join() + note;
  }

  @Method({
    params: [
      { name: "day", type: T.localDate },
      { name: "at", type: Date },
      { name: "json", type: Object },
    ],
  })
  async c(day: string, at: Date | undefined, json: { deep: number[] }): Promise<string> {
    return day + at + json.deep;
  }

  @Method({ params: [T.array(T.int32), T.map(Number), T.bigInteger] })
  async d(codes: readonly number[], weights: Map<string, number>, big: bigint): Promise<number> {
    return codes.length + weights.size + Number(big);
  }

  // A request stream: each entry is one message's type, the parameter an AsyncIterable of them.
  @Method({ kind: "client_streaming", params: [{ context: true }, { name: "xs", type: T.int32 }] })
  async total(_ctx: unknown, xs: AsyncIterable<number>): Promise<number> {
    let sum = 0;
    for await (const x of xs) sum += x;
    return sum;
  }

  @Method({ kind: "bidi_streaming", params: [Pet] })
  async *echo(pets: AsyncIterable<Pet>): AsyncGenerator<Pet> {
    yield* pets;
  }

  // @ts-expect-error: a client stream's parameter is an AsyncIterable of the entry's type, not one
  @Method({ kind: "client_streaming", params: [Number] })
  async notAStream(x: number): Promise<number> {
    return x;
  }

  // @ts-expect-error: messages of numbers, a stream of strings
  @Method({ kind: "bidi_streaming", params: [Number] })
  async *wrongMessages(xs: AsyncIterable<string>): AsyncGenerator<string> {
    yield* xs;
  }

  // Without params the decorator checks nothing (metadata or @Param give the types).
  @Method()
  async e(@Param("name") name: string, @Ctx() _ctx: unknown): Promise<string> {
    return name;
  }

  @Method("F")
  async f(): Promise<void> {}

  // @ts-expect-error: params[0] is a string, the parameter a number
  @Method({ params: [String] })
  async wrongType(n: number): Promise<number> {
    return n;
  }

  // @ts-expect-error: T.localDate binds text, not a Date
  @Method({ params: [{ name: "day", type: T.localDate }] })
  async wrongJava(day: Date): Promise<Date> {
    return day;
  }

  // @ts-expect-error: an optional parameter must accept undefined
  @Method({ params: [{ name: "n", type: Number, optional: true }] })
  async wrongOptional(n: number): Promise<number> {
    return n;
  }

  // @ts-expect-error: [Pet] binds an array, the parameter is one Pet
  @Method({ params: [[Pet]] })
  async wrongArray(p: Pet): Promise<Pet> {
    return p;
  }

  // @ts-expect-error: params lists fewer parameters than the method takes
  @Method({ params: [String] })
  async tooFew(a: string, b: string): Promise<string> {
    return a + b;
  }

  // @ts-expect-error: params lists more parameters than the method takes
  @Method({ params: [String, String] })
  async tooMany(a: string): Promise<string> {
    return a;
  }

  // @ts-expect-error: @Method belongs on a method, not a field
  @Method() notAMethod = "x";
}

// --- The standard (TC39) signatures, called as TypeScript 5's default would ----------------
declare const methodContext: ClassMethodDecoratorContext;
declare const fieldContext: ClassFieldDecoratorContext<unknown, string>;
const fits: void = Method({ params: [String, { name: "n", type: Number, optional: true }] })(async (s: string, n?: number) => s + n, methodContext);
// @ts-expect-error: params[1] is a number, the parameter a string
const misfits: void = Method({ params: [String, Number] })(async (s: string, n: string) => s + n, methodContext);
const fieldFits: void = Field(String)(undefined, fieldContext);
// @ts-expect-error: @Field(Number) on a string field
const fieldMisfits: void = Field(Number)(undefined, fieldContext);
export const standard = [fits, misfits, fieldFits, fieldMisfits];

// --- @Field(Type) --------------------------------------------------------------------------
export class Fields {
  @Field(String) name!: string;
  @Field({ type: Number, optional: true }) age?: number;
  // Presence is not compared (x!: T with optional: true is common).
  @Field({ type: [String], optional: true }) tags!: string[];
  @Field(T.bigDecimal) price!: string;
  @Field(Pet) pet!: Pet;
  @Field() fromMetadata!: Date;
  @Field({ maxLength: 3 }) constrained!: string;
  // @ts-expect-error: @Field(Number) on a string property
  @Field(Number) wrong!: string;
  // @ts-expect-error: @Field(Date) on a Java date (text) property
  @Field(Date) wrongDate!: ValueOf<typeof T.localDate>;
}

// --- @Service, @Param, @Ctx: where they belong ---------------------------------------------
export class Misplaced {
  // @ts-expect-error: @Service belongs on a class
  @Service() method(): void {}
  // @ts-expect-error: @Param belongs on a parameter
  @Param("x") field = 1;
  take(@Param("x") x: string, @Ctx() _ctx: unknown): string {
    return x;
  }
}
// @ts-expect-error: @Service decorates a class, not a value
Service()(42);
// @ts-expect-error: a parameter decorator's index is a number
Param("x")(Misplaced.prototype, "take", "0");
Param("x")(Misplaced.prototype, "take", 0);
