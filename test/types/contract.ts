/**
 * Type-level tests of contracts (`triple-rpc/contract`): a contract class's stubs type-check with
 * `unimplemented()`, an implementation overrides them, and the client of the contract, of its
 * implementation and of an interface it implements are one type. Checked by typecheck only.
 */
import { Code, Ctx, Method, Param, RpcError, Service, T, unimplemented } from "../../src/contract.js";
import { type CallOptions, type Client, createClient } from "../../src/client.js";
import type { CallContext } from "../../src/index.js";
import { createClient as createWebClient } from "../../src/web.js";
import { type Equal, expectTrue, expectType } from "./expect.js";

/** What a team shares: the interface the contract implements. */
interface Accounts {
  balance(id: string): Promise<bigint>;
  history(id: string, limit: number): AsyncIterable<string>;
}

@Service("types.Accounts")
class AccountsContract implements Accounts {
  @Method()
  balance(@Param(T.string) _id: string): Promise<bigint> {
    // `unimplemented()` is `never`: it satisfies any declared result.
    return unimplemented();
  }

  @Method({ kind: "server_streaming", returns: T.string })
  history(@Param(T.string) _id: string, @Param(T.number) _limit: number): AsyncIterable<string> {
    return unimplemented();
  }

  @Method()
  whoAmI(@Ctx() _ctx: CallContext): Promise<string> {
    return unimplemented();
  }
}

/** The server's class: overrides with async methods and generators. */
class AccountsImpl extends AccountsContract {
  override async balance(id: string): Promise<bigint> {
    if (id === "") throw new RpcError(Code.InvalidArgument, "id is empty");
    return 1n;
  }
  override async *history(id: string, limit: number): AsyncGenerator<string> {
    for (let i = 0; i < limit; i++) yield `${id}:${i}`;
  }
  override async whoAmI(ctx: CallContext): Promise<string> {
    return String(ctx);
  }
}

expectTrue<Equal<ReturnType<typeof unimplemented>, never>>();
// The client of the implementation is the client of the contract: apps share the contract only.
expectTrue<Equal<Client<AccountsImpl>, Client<AccountsContract>>>();
// The interface's methods keep their client types.
expectTrue<Equal<Client<AccountsContract>["balance"], Client<Accounts>["balance"]>>();
expectTrue<Equal<Client<AccountsContract>["history"], Client<Accounts>["history"]>>();
expectTrue<Equal<Client<Accounts>["balance"], (id: string, options?: CallOptions) => Promise<bigint>>>();
expectTrue<Equal<Client<Accounts>["history"], (id: string, limit: number, options?: CallOptions) => AsyncIterable<string>>>();
expectTrue<Equal<Client<AccountsContract>["whoAmI"], (options?: CallOptions) => Promise<string>>>();

class WrongOverride extends AccountsContract {
  // @ts-expect-error: an implementation cannot change a contract method's result type
  override async balance(_id: string): Promise<string> {
    return "";
  }
}
void WrongOverride;

/** Node and web clients of the contract; never run. */
export async function clients(): Promise<void> {
  const node = createClient(AccountsContract, { providers: ["127.0.0.1:1"] });
  const web = createWebClient(AccountsContract, { baseUrl: "http://127.0.0.1:1" });
  expectType<Client<AccountsContract>>()(node);
  expectType<Client<AccountsContract>>()(web);
  expectType<Promise<bigint>>()(web.balance("a"));
  for await (const line of node.history("a", 3)) expectType<string>()(line);
  // @ts-expect-error: `limit` is required
  node.history("a");
  // A contract is an abstract class to createClient: an interface is not a value.
  // @ts-expect-error: 'Accounts' only refers to a type
  createClient(Accounts, { providers: ["127.0.0.1:1"] });
}
