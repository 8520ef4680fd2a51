import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CallContext, Code, Ctx, Field, Method, Param, RpcError, Service } from "../../src/index.js";

/** An order line: what `ShopService.price` takes as its one (unnamed) class argument. */
export class Line {
  @Field({ minLength: 2, pattern: "^[A-Z0-9-]+$", description: "the article number" })
  sku!: string;
  @Field({ min: 1, max: 10 })
  qty!: number;
}

export class Quote {
  @Field()
  total!: number;
  @Field()
  currency!: string;
}

/** How often each handler ran: a refused call must not reach its handler. */
export const runs: Record<string, number> = {};
function ran(name: string): void {
  runs[name] = (runs[name] ?? 0) + 1;
}

/** A service with tools of every shape, and methods that are not tools. */
@Service("shop.ShopService", { description: "a shop" })
export class ShopService {
  @Method({ mcp: true, description: "Prices an order line", returns: Quote })
  price(line: Line): Quote {
    ran("price");
    return { total: line.qty * 2.5, currency: "EUR" };
  }

  @Method({ mcp: { name: "greet", title: "Greeting" }, idempotent: true, returns: String })
  greet(
    @Param({ name: "name", minLength: 3, pattern: "^[a-z]+$" }) name: string,
    @Param({ name: "times", optional: true, min: 1, max: 3 }) times?: number,
  ): string {
    ran("greet");
    return `hello ${name}`.repeat(times ?? 1);
  }

  @Method({ mcp: { destructive: true }, auth: { roles: ["admin"] }, returns: String })
  wipe(@Param("what") what: string): string {
    ran("wipe");
    return `wiped ${what}`;
  }

  @Method({ mcp: true })
  boom(): void {
    ran("boom");
    throw new Error("kaboom: the database password is hunter2");
  }

  @Method({ mcp: true })
  refuse(): void {
    ran("refuse");
    throw new RpcError(Code.FailedPrecondition, "the shop is closed on Sundays");
  }

  @Method({ mcp: true })
  async slow(@Param("ms") ms: number, @Ctx() ctx: CallContext): Promise<string> {
    ran("slow");
    await new Promise((r) => setTimeout(r, ms));
    return ctx.aborted ? "aborted" : "done";
  }

  @Method({ returns: String })
  internal(): string {
    ran("internal");
    return "not a tool";
  }
}

/** A service that opts in as a whole: its unary methods are tools, `mcp: false` and streams are not. */
@Service("shop.CatalogService", { mcp: true })
export class CatalogService {
  @Method({ returns: [String] })
  list(@Param("prefix") prefix: string): string[] {
    return ["apple", "avocado", "banana"].filter((x) => x.startsWith(prefix));
  }

  @Method({ mcp: false })
  secret(): string {
    return "no";
  }

  async *watch(@Param("n") n: number): AsyncGenerator<string> {
    for (let i = 0; i < n; i++) yield `${i}`;
  }
}

/** A bearer verifier: `admin` holds the admin role, `user` none, anything else is refused. */
export function verify(token: string) {
  if (token === "admin") return { subject: "ann", roles: ["admin"] };
  if (token === "user") return { subject: "bob", roles: [] };
  return null;
}

/** What the custom fetch saw of the client's requests: the `mcp-protocol-version` header of each. */
export interface Seen {
  versions: (string | null)[];
}

/**
 * The official SDK's client over streamable HTTP. `revision` makes the client ask for an older
 * revision in `initialize` (the SDK always asks for its latest; the server answers with the
 * revision asked when it speaks it, and the client then sends that revision's header).
 */
export async function connect(url: string, opts: { token?: string; revision?: string; seen?: Seen } = {}): Promise<Client> {
  const fetchLike = async (input: string | URL, init?: RequestInit): Promise<Response> => {
    let body = init?.body;
    if (opts.revision && typeof body === "string" && body.includes('"initialize"')) {
      body = body.replace(/"protocolVersion":"[^"]+"/, `"protocolVersion":"${opts.revision}"`);
    }
    opts.seen?.versions.push(new Headers(init?.headers).get("mcp-protocol-version"));
    return fetch(input, { ...init, body });
  };
  const headers: Record<string, string> = opts.token ? { authorization: `Bearer ${opts.token}` } : {};
  const transport = new StreamableHTTPClientTransport(new URL("/mcp", url), { requestInit: { headers }, fetch: fetchLike });
  const client = new Client({ name: "triple-rpc-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** The text of a tool result's first content item. */
export function textOf(r: unknown): string {
  const content = (r as { content: { type: string; text: string }[] }).content;
  return content[0].text;
}
