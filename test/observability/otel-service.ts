import { propagation, context as otelContext, trace } from "@opentelemetry/api";
import { BidiStream, ClientStream, Code, Method, Param, RpcError, ServerStream, Service } from "../../src/index.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The service the observability tests call: every kind, errors, a nested span, baggage. */
@Service("otel.Probe")
export class ProbeService {
  @Method()
  async hello(@Param() name: string): Promise<string> {
    return `hello ${name}`;
  }

  /** Fails with the given code (RpcError: the handler's deliberate answer). */
  @Method()
  async fail(@Param() code: number): Promise<string> {
    throw new RpcError(code as Code, `failing with ${code}`);
  }

  /** Throws a plain Error: a bug, logged with its stack. */
  @Method()
  async boom(@Param() what: string): Promise<string> {
    await sleep(1);
    throw new TypeError(`kaboom: ${what}`);
  }

  /** Makes a span of its own after an await, and returns the baggage entry `user`. */
  @Method()
  async nested(): Promise<{ baggage: string | undefined; traceId: string | undefined }> {
    await sleep(2);
    const tracer = trace.getTracer("probe-handler");
    return tracer.startActiveSpan("handler-work", async (span) => {
      await sleep(1);
      span.end();
      const bag = propagation.getBaggage(otelContext.active());
      return { baggage: bag?.getEntry("user")?.value, traceId: trace.getActiveSpan()?.spanContext().traceId };
    });
  }

  /** Waits `ms` (or until the call is aborted). */
  @Method()
  async slow(@Param() ms: number): Promise<string> {
    await sleep(ms);
    return "done";
  }

  @ServerStream()
  async *count(@Param() n: number): AsyncGenerator<number> {
    for (let i = 1; i <= n; i++) {
      await sleep(15);
      yield i;
    }
  }

  /** Yields one message, then fails with a plain Error. */
  @ServerStream()
  async *breaks(): AsyncGenerator<number> {
    yield 1;
    await sleep(1);
    throw new RangeError("the stream broke");
  }

  @ClientStream()
  async sum(@Param() nums: AsyncIterable<number>): Promise<number> {
    let total = 0;
    for await (const n of nums) total += n;
    return total;
  }

  @BidiStream()
  async *echo(@Param() msgs: AsyncIterable<string>): AsyncGenerator<string> {
    for await (const s of msgs) yield s.toUpperCase();
  }
}
