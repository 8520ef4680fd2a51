import { Field, JavaClass, Method, Param, RpcError, Code, Service, T } from "../../src/index.js";

/** org.example.User of test/java/org/example/User.java, field for field. */
@JavaClass("org.example.User")
export class User {
  @Field({ optional: true }) name?: string;
  @Field(T.int32) age!: number;
  @Field() id!: bigint;
  @Field({ type: T.bigInteger, optional: true }) big?: bigint;
  @Field() score!: number;
  @Field() active!: boolean;
  @Field({ optional: true }) born?: Date;
  @Field({ optional: true }) avatar?: Uint8Array;
  @Field({ type: [String], optional: true }) tags?: string[];
  @Field({ type: T.map(T.int32), optional: true }) attrs?: Map<string, number>;
  @Field({ type: User, optional: true }) friend?: User;
}

/** A class without @JavaClass: it cannot travel in hessian2. */
export class Anonymous {
  @Field() name!: string;
}

/** What the handlers saw, for the tests to check types. */
export const seen: unknown[][] = [];

@Service("org.example.UserService")
export class UserService {
  /** Ages the user `times` years, renames the friend, and answers the user. */
  @Method({ returns: User })
  async greet(@Param({ name: "user", type: User }) user: User, @Param({ name: "times", type: T.int32 }) times: number): Promise<User> {
    seen.push([user, times]);
    user.age += times;
    if (user.friend) user.friend.name = `${user.friend.name}!`;
    return user;
  }

  @Method({ returns: String })
  async echo(@Param("text") text: string): Promise<string> {
    if (text === "fail") throw new RpcError(Code.FailedPrecondition, "no such user: 7");
    if (text === "boom") throw new Error("kaput");
    return text;
  }

  @Method({ returns: T.int64 })
  async sum(@Param({ name: "xs", type: [T.int64] }) xs: number[], @Param("when") when: Date, @Param("raw") raw: Uint8Array): Promise<number> {
    seen.push([xs, when, raw]);
    return xs.reduce((a, b) => a + b, 0) + raw.length + when.getUTCFullYear();
  }

  @Method({ kind: "server_streaming", returns: String })
  async *count(@Param({ name: "n", type: T.int32 }) n: number): AsyncGenerator<string> {
    for (let i = 0; i < n; i++) yield `#${i}`;
  }

  @Method({ kind: "client_streaming", returns: T.int32 })
  async total(@Param({ name: "xs", type: T.int32 }) xs: AsyncIterable<number>): Promise<number> {
    let t = 0;
    for await (const x of xs) t += x;
    return t;
  }

  @Method({ kind: "bidi_streaming", returns: User })
  async *rename(@Param({ name: "users", type: User }) users: AsyncIterable<User>): AsyncGenerator<User> {
    for await (const u of users) {
      u.name = `${u.name}?`;
      yield u;
    }
  }
}

/** How often AnonService.anonymous ran. */
export const anonCalls = { n: 0 };

/** A service whose result class has no @JavaClass. */
@Service("org.example.AnonService")
export class AnonService {
  @Method({ returns: Anonymous })
  async anonymous(@Param("name") name: string): Promise<Anonymous> {
    anonCalls.n++;
    return Object.assign(new Anonymous(), { name });
  }
}
