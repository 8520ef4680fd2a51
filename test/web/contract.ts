import { Ctx, Field, Method, Param, Service, T, unimplemented } from "../../src/contract.js";
import type { CallContext } from "../../src/index.js";

/**
 * The web client's test contract: imports only the contract entry (so a browser bundle of it has
 * no server code and no `node:` module), and gives every type explicitly, since esbuild does not
 * emit TypeScript's decorator metadata.
 */

/** A decorated class whose fields need revival: a Date, a bigint, a Map, bytes. */
export class Profile {
  @Field(T.string) name = "";
  @Field(T.date) born: Date = new Date(0);
  @Field(T.bigint) balance = 0n;
  @Field(T.map(T.number)) scores: Map<string, number> = new Map();
  @Field(T.bytes) avatar: Uint8Array = new Uint8Array(0);

  /** A method on the class: only a revived instance has it. */
  initials(): string {
    return this.name
      .split(" ")
      .map((w) => w[0])
      .join("");
  }
}

@Service("web.WebTest")
export class WebTestContract {
  @Method()
  greet(@Param(T.string) _name: string): Promise<string> {
    return unimplemented();
  }

  @Method({ idempotent: true })
  add(@Param(T.number) _a: number, @Param(T.number) _b: number): Promise<number> {
    return unimplemented();
  }

  @Method({ returns: Profile })
  profile(@Param(T.string) _name: string, @Param(T.bigint) _balance: bigint): Promise<Profile> {
    return unimplemented();
  }

  @Method({ returns: T.date })
  nextDay(@Param(T.date) _d: Date): Promise<Date> {
    return unimplemented();
  }

  @Method()
  label(
    @Param({ name: "code", type: T.string, pattern: "^[a-z]+$", maxLength: 4 }) _code: string,
    @Param({ name: "n", type: T.number, min: 1 }) _n: number,
  ): Promise<string> {
    return unimplemented();
  }

  @Method()
  slow(@Param(T.number) _ms: number, @Ctx() _ctx: CallContext): Promise<string> {
    return unimplemented();
  }

  @Method()
  headers(@Ctx() _ctx: CallContext): Promise<Record<string, string>> {
    return unimplemented();
  }

  /** A `java.math.BigDecimal` result: the client checks it with the Java value parsers (loaded for it). */
  @Method({ returns: T.bigDecimal })
  price(@Param(T.string) _text: string): Promise<string> {
    return unimplemented();
  }

  @Method()
  flaky(@Param(T.string) _key: string): Promise<number> {
    return unimplemented();
  }

  @Method({ kind: "server_streaming", returns: T.bigint })
  count(@Param(T.number) _n: number): AsyncIterable<bigint> {
    return unimplemented();
  }

  @Method({ kind: "client_streaming" })
  sum(@Param(T.number) _nums: AsyncIterable<number>): Promise<number> {
    return unimplemented();
  }

  @Method({ kind: "bidi_streaming" })
  double(@Param(T.number) _nums: AsyncIterable<number>): AsyncIterable<number> {
    return unimplemented();
  }
}
