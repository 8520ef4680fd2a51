import { BidiStream, CallContext, ClientStream, Code, Ctx, Method, Param, RpcError, ServerStream, Service } from "../../src/index.js";

/** What the echo service saw of a request: the headers a client is expected to send. */
export interface Seen {
  protocolVersion: string | undefined;
  version: string | undefined;
  group: string | undefined;
  timeout: string | undefined;
  grpcTimeout: string | undefined;
  authorization: string | undefined;
  custom: string | undefined;
  contentType: string | undefined;
}

/** An IDL-less service: several parameters, bytes, the four kinds, headers seen, slow and failing calls. */
@Service("test.Echo")
export class EchoService {
  @Method()
  async add(@Param() a: number, @Param() b: number): Promise<number> {
    return a + b;
  }

  @Method()
  async concat(@Param({ type: [String] }) parts: string[], @Param() sep: string): Promise<string> {
    return parts.join(sep);
  }

  @Method()
  async size(@Param(Uint8Array) data: Uint8Array): Promise<number> {
    return data.length;
  }

  @Method()
  async seen(@Ctx() ctx: CallContext): Promise<Seen> {
    const h = ctx.requestHeaders;
    ctx.responseHeaders.set("x-answer", "42");
    return {
      protocolVersion: h.get("tri-protocol-version"),
      version: h.get("tri-service-version"),
      group: h.get("tri-service-group"),
      timeout: h.get("tri-service-timeout"),
      grpcTimeout: h.get("grpc-timeout"),
      authorization: h.get("authorization"),
      custom: h.get("x-custom"),
      contentType: h.get("content-type"),
    };
  }

  /** How many times `slow` was called (a count a test compares, e.g. to see no retry). */
  static slowCalls = 0;

  @Method()
  async slow(@Param() ms: number, @Ctx() ctx: CallContext): Promise<string> {
    EchoService.slowCalls++;
    await new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(t);
        resolve(undefined);
      });
    });
    return "done";
  }

  @Method()
  async fail(@Param() code: number, @Param() text: string): Promise<void> {
    throw new RpcError(code as Code, text);
  }

  @ServerStream()
  async *count(@Param() n: number): AsyncGenerator<number> {
    for (let i = 1; i <= n; i++) yield i;
  }

  @ClientStream()
  async sum(@Param() nums: AsyncIterable<number>): Promise<number> {
    let s = 0;
    for await (const x of nums) s += x;
    return s;
  }

  @BidiStream()
  async *double(@Param() nums: AsyncIterable<number>): AsyncGenerator<number> {
    for await (const x of nums) yield x * 2;
  }
}

/** The same interface in version 2.0.0 / group blue, to check selection headers. */
@Service("test.Echo", { version: "2.0.0", group: "blue" })
export class EchoV2 {
  @Method()
  async add(@Param() a: number, @Param() b: number): Promise<number> {
    return 1000 + a + b;
  }
}

/** Async generator of the given values. */
export async function* values<T>(list: readonly T[]): AsyncGenerator<T> {
  for (const v of list) yield v;
}

/** Collects an async iterable. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) out.push(v);
  return out;
}
