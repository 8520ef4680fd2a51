import { Field, Method, Param, Service, T, InMemoryFile } from "../../src/index.js";

/** A nested bindable class. Its fields are optional: the binding tests send a few at a time. */
export class Address {
  @Field({ optional: true }) city!: string;
  @Field({ optional: true }) zip!: number;
}

/** A bindable class with every kind of field, all optional (the tests send subsets). */
export class Profile {
  @Field({ optional: true }) name!: string;
  @Field({ optional: true }) age!: number;
  @Field({ optional: true }) admin!: boolean;
  @Field({ optional: true }) born!: Date;
  @Field({ optional: true }) big!: bigint;
  @Field({ type: [String], optional: true }) tags!: string[];
  @Field({ optional: true }) address!: Address;
  @Field({ type: T.record(Number), optional: true }) scores!: Record<string, number>;
}

/** Test-only methods exercising the binder; each echoes what it received. */
@Service("test.BinderService")
export class BinderServiceImpl {
  /** Echoes any string. */
  @Method()
  echo(@Param() text: string): { text: string } {
    return { text };
  }

  /** Untyped record: shows which keys arrived and whether the prototype stayed clean. */
  @Method()
  record(@Param() data: Record<string, unknown>): { keys: string[]; proto: boolean; polluted: boolean } {
    // Untyped parameters accept any JSON value, null included.
    if (typeof data !== "object" || data === null) return { keys: [], proto: true, polluted: ({} as Record<string, unknown>).polluted !== undefined };
    return {
      keys: Object.keys(data).sort(),
      proto: Object.getPrototypeOf(data) === Object.prototype || Object.getPrototypeOf(data) === null,
      polluted: ({} as Record<string, unknown>).polluted !== undefined,
    };
  }

  /** A class with typed fields: answers with their runtime types. */
  @Method()
  profile(@Param() p: Profile): Record<string, unknown> {
    return {
      isProfile: p instanceof Profile,
      name: p.name,
      age: p.age,
      admin: p.admin,
      born: p.born instanceof Date ? p.born.toISOString() : String(p.born),
      big: typeof p.big === "bigint" ? `${p.big}n` : String(p.big),
      tags: p.tags,
      city: p.address?.city,
      zip: p.address?.zip,
      cityIsAddress: p.address === undefined || p.address instanceof Address,
      scores: p.scores,
      polluted: ({} as Record<string, unknown>).polluted !== undefined,
      ownProto: Object.hasOwn(p, "__proto__") || Object.hasOwn(p, "constructor"),
    };
  }

  /** Unnamed scalar parameters bound in order. */
  @Method()
  ordered(@Param() a: string, @Param() n: number, @Param() flag: boolean, @Param() when: Date, @Param() id: bigint): unknown[] {
    return [a, n, flag, when.toISOString(), `${id}`];
  }

  /** Named array parameter collecting repeated values. */
  @Method()
  tags(@Param({ name: "tag", type: [String] }) tags: string[], @Param({ name: "n", type: [Number] }) ns: number[]): unknown {
    return { tags, ns };
  }

  /** An uploaded file with its name and type, plus unnamed positional parts. */
  @Method()
  file(@Param() note: string, @Param() f: InMemoryFile): unknown {
    return { note, filename: f.filename, contentType: f.contentType, size: f.byteLength, isFile: f instanceof InMemoryFile };
  }

  /** Returns a class instance: the XML root is named after the class. */
  @Method()
  address(@Param() city: string): Address {
    const a = new Address();
    a.city = city;
    a.zip = 12345;
    return a;
  }
}
