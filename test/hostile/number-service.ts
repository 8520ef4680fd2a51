import { Field, JavaClass, Method, Param, Post, Query, Service, T } from "../../src/index.js";

/** A Java class with a string, an int and a BigInteger field (type-confusion targets). */
@JavaClass("org.example.Amount")
export class Amount {
  @Field() label!: string;
  @Field(T.int32) count!: number;
  @Field({ type: T.bigInteger, optional: true }) big?: bigint;
}

/** A ledger entry (an XML or JSON object with a bigint field). */
@JavaClass("org.example.Entry")
export class Entry {
  @Field() id!: bigint;
}

/** What a handler got: its JavaScript type and a short description that never converts a bigint to decimal. */
function seen(v: unknown): string {
  if (typeof v === "bigint") return `bigint:${v.toString(16).length} hex digits`;
  if (typeof v === "string") return `string:${v.length > 40 ? `${v.length} chars` : v}`;
  return `${typeof v}:${String(v)}`;
}

/**
 * The number-conversion targets of the hostile number tests: one parameter of each declared type,
 * each answering what its handler got (`bigint:…`, `string:…`, `number:…`), never echoing a huge
 * value. IDL-less: reachable with JSON, text, forms, REST, and Dubbo's hessian2 and fastjson2 wrappers.
 */
@Service("org.example.NumberService")
export class NumberService {
  @Method({ returns: String })
  text(@Param("s") s: string): string {
    return seen(s);
  }

  @Method({ returns: String })
  count(@Param({ name: "n", type: T.int32 }) n: number): string {
    return seen(n);
  }

  @Method({ returns: String })
  ratio(@Param({ name: "x", type: Number }) x: number): string {
    return seen(x);
  }

  @Method({ returns: String })
  @Post("/numbers/big")
  big(@Query({ name: "b", type: T.bigint }) b: bigint): string {
    return seen(b);
  }

  @Method({ returns: String })
  long(@Param({ name: "b", type: T.bigint }) b: bigint): string {
    return seen(b);
  }

  @Method({ returns: String })
  huge(@Param({ name: "b", type: T.bigInteger }) b: bigint): string {
    return seen(b);
  }

  @Method({ returns: String })
  entry(@Param() e: Entry): string {
    return seen(e.id);
  }

  @Method({ returns: String })
  amount(@Param({ name: "a", type: Amount }) a: Amount): string {
    return `label ${seen(a.label)}, count ${seen(a.count)}, big ${seen(a.big)}`;
  }
}
