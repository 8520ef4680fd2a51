import { createHash } from "node:crypto";
import { Field, Method, Param, Service } from "../../src/index.js";

/** A user, bound from XML (`<user><username>…</username><location>…</location></user>`) or JSON. */
export class User {
  @Field() username!: string;
  @Field() location!: string;
}

/** The one-field answer every sample method returns. */
export interface Reply {
  message: string;
}

/**
 * The IDL-less sample (issue 3): a decorated class with no .proto whose methods take JSON,
 * url-encoded forms, multipart uploads, plain text and XML (docs/binding.md).
 */
@Service("sample.UserService")
export class UserServiceImpl {
  /** JSON `["Ann"]` or text/plain `Ann` → `hello, Ann`. */
  @Method()
  sayHello(@Param("name") name: string): Reply {
    return { message: `hello, ${name}` };
  }

  /** Form `username=ann&age=30` or JSON `["ann", 30]`. */
  @Method()
  register(@Param("username") username: string, @Param("age") age: number): Reply {
    return { message: `registered ${username}, age ${age}` };
  }

  /** Form `b=2&a=1` → `a=1,b=2`: every pair, sorted by key. */
  @Method()
  labels(@Param("labels") labels: Map<string, string>): Reply {
    const pairs = [...labels].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return { message: pairs.map(([k, v]) => `${k}=${v}`).join(",") };
  }

  /** Multipart `title` + `file` → the file's size and SHA-256. */
  @Method()
  upload(@Param("title") title: string, @Param("file") file: Uint8Array): Reply {
    const sha = createHash("sha256").update(file).digest("hex");
    return { message: `${title}: ${file.byteLength} bytes, sha256 ${sha}` };
  }

  /** XML `<user><username>ann</username><location>Berlin</location></user>`; answers XML to XML. */
  @Method()
  saveUser(@Param("user") user: User): Reply {
    return { message: `saved ${user.username} from ${user.location}` };
  }
}
