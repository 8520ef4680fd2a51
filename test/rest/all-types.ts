import { Body, Field, Get, Header, Method, Param, Path, Post, Query, Service, T, InMemoryFile } from "../../src/index.js";

export class Address {
  @Field() city!: string;
  @Field({ optional: true }) zip?: string;
}

/** A class with a field of every type of the type model, a self-reference included. */
export class Everything {
  @Field({ minLength: 1, maxLength: 20, pattern: "^[a-z]+$", description: "lower-case text" }) text!: string;
  @Field({ min: 0, max: 100 }) count!: number;
  @Field({ format: "uuid" }) id!: string;
  @Field({ type: String, enum: ["red", "green"] }) colour!: string;
  @Field({ type: [String], minItems: 1, maxItems: 3, format: "email" }) emails!: string[];
  @Field({ type: T.int32 }) small!: number;
  @Field({ type: T.int64 }) large!: number;
  @Field({ type: T.float }) ratio!: number;
  @Field() flag!: boolean;
  @Field() huge!: bigint;
  @Field() when!: Date;
  @Field() bytes!: Uint8Array;
  @Field({ type: [String] }) list!: string[];
  @Field({ type: T.map(Number) }) scores!: Map<string, number>;
  @Field({ type: T.record([Address]) }) byCity!: Record<string, Address[]>;
  @Field() home!: Address;
  @Field(Object) anything!: unknown;
  @Field({ type: Everything, optional: true }) next?: Everything;
}

@Service("fixture.AllTypes", { description: "Every type and every parameter source" })
export class AllTypesService {
  @Method({ returns: Everything, description: "Echoes the value" })
  echo(@Param("value") value: Everything): Everything {
    return value;
  }

  @Method()
  positional(@Param() a: string, @Param() b: number, @Param({ type: Date, optional: true }) c?: Date): string {
    return `${a}${b}${c?.toISOString() ?? ""}`;
  }

  @Method()
  upload(@Param("title") title: string, @Param("file") file: InMemoryFile, @Param("raw") raw: Uint8Array): number {
    return title.length + file.byteLength + raw.byteLength;
  }

  @Method()
  text(@Param() body: string): string {
    return body;
  }

  @Method({ auth: { roles: ["admin"] } })
  secret(): string {
    return "s";
  }

  @Get("/all/{id}/{when}")
  @Method({ returns: [Address] })
  sources(
    @Path("id") id: bigint,
    @Path("when") when: Date,
    @Query({ name: "tag", type: [String] }) tags: string[],
    @Query({ name: "flag", type: Boolean, optional: true }) flag: boolean | undefined,
    @Query({ name: "limit", type: Number, optional: true, min: 1, max: 100 }) limit: number | undefined,
    @Header({ name: "X-Tenant", type: String }) tenant: string,
  ): Address[] {
    return [Object.assign(new Address(), { city: `${id}${when.getTime()}${tags}${flag}${limit}${tenant}` })];
  }

  @Post("/all/{id}")
  @Method({ auth: true })
  save(@Path("id") id: number, @Body() home: Address): string {
    return `${id}${home.city}`;
  }
}
