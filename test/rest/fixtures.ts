import { Body, Delete, Field, Get, Header, Method, Param, Patch, Path, Post, Put, Query, Service, InMemoryFile } from "../../src/index.js";

export class User {
  @Field() id!: number;
  @Field() name!: string;
  @Field({ type: [String], optional: true }) tags?: string[];
}

function user(id: number, name: string, tags?: string[]): User {
  return Object.assign(new User(), { id, name, tags });
}

/** A user store exposed as REST routes, each method also callable by its RPC path. */
@Service("demo.UserService", { description: "Users of the demo, as REST and RPC" })
export class UserService {
  readonly users = new Map<number, User>([
    [1, user(1, "ann", ["admin"])],
    [2, user(2, "bob")],
  ]);

  @Get("/users/{id}")
  @Method({ returns: User, description: "Reads one user by id" })
  get(@Path("id") id: number): User {
    const u = this.users.get(id);
    if (!u) throw new Error(`no user ${id}`);
    return u;
  }

  @Get("/users/me")
  me(@Header("x-user") who: string): string {
    return `you are ${who}`;
  }

  @Get("/users")
  @Method({ returns: [User] })
  list(
    @Query({ name: "limit", type: Number, optional: true, min: 1, max: 50, description: "page size" }) limit?: number,
    @Query({ name: "tag", type: [String], optional: true }) tags?: string[],
  ): User[] {
    let all = [...this.users.values()];
    if (tags) all = all.filter((u) => tags.every((t) => u.tags?.includes(t)));
    return all.slice(0, limit ?? all.length);
  }

  @Post("/users")
  @Method({ returns: User })
  create(@Body() u: User): User {
    const created = user(this.users.size + 1, u.name, u.tags);
    this.users.set(created.id, created);
    return created;
  }

  @Put("/users/{id}")
  @Method({ returns: User })
  replace(@Path("id") id: number, @Body() u: User): User {
    const next = user(id, u.name, u.tags);
    this.users.set(id, next);
    return next;
  }

  @Patch("/users/{id}/name")
  rename(@Path("id") id: number, @Body("name") name: string): string {
    const u = this.get(id);
    u.name = name;
    return `renamed ${id} to ${name}`;
  }

  @Delete("/users/{id}")
  remove(@Path("id") id: number, @Header({ name: "x-tenant", type: String, optional: true }) tenant?: string): string {
    return `deleted ${id}${tenant ? ` in ${tenant}` : ""}`;
  }

  @Get("/files/{name}")
  file(@Path("name") name: string): string {
    return name;
  }

  @Get("/types/{flag}/{big}/{when}")
  types(@Path("flag") flag: boolean, @Path("big") big: bigint, @Path("when") when: Date, @Query({ name: "n", type: [Number] }) ns: number[]): string {
    return `${typeof flag}:${flag} ${typeof big}:${big} ${when.toISOString()} ${ns.map((n) => typeof n).join(",")}:${ns.join("+")}`;
  }

  @Post("/users/{id}/avatar")
  avatar(@Path("id") id: number, @Body("title") title: string, @Body({ name: "file", type: InMemoryFile }) file: InMemoryFile): string {
    return `user ${id}: ${title} ${file.filename} ${file.byteLength} bytes`;
  }

  @Method()
  ping(@Param("text") text: string): string {
    return `pong ${text}`;
  }
}
