import * as path from "node:path";
import { Method, Param, RpcError, Code, Service } from "../../src/index.js";

/** The request message of greet.proto. */
export interface GreetRequest {
  name: string;
}

/** The response message of greet.proto. */
export interface GreetResponse {
  greeting: string;
}

/** Where greet.proto lives (next to the sources, one level above the compiled file). */
export const GREET_PROTO = path.resolve(__dirname, "../../../samples/greet/greet.proto");

/** How many greetings `GreetServerStream` sends for one request. */
export const SERVER_STREAM_GREETINGS = 3;

/**
 * The sample greeting service, the Triple protocol's own example:
 * - `Greet` accepts exactly one name and answers `greeting` = that name; any other name fails
 *   with `name is not right: <name>`.
 * - `GreetServerStream` (server streaming) answers one request with
 *   {@link SERVER_STREAM_GREETINGS} greetings `hello, <name> (1/3)`, `(2/3)`, `(3/3)`.
 * - `GreetClientStream` (client streaming) reads every request and answers once with the
 *   received names joined by `", "` (`""` when the client sent none).
 * - `GreetStream` (bidi) echoes one greeting per request as it arrives: `greeting` = `name`.
 *
 * The streaming methods greet any name: the accepted-name rule belongs to `Greet` alone.
 */
@Service("greet.GreetService", { proto: GREET_PROTO })
export class GreetServiceImpl {
  constructor(readonly acceptedName = "triple") {}

  @Method("Greet")
  async greet(@Param() req: GreetRequest): Promise<GreetResponse> {
    if (req.name !== this.acceptedName) throw new Error(`name is not right: ${req.name}`);
    return { greeting: req.name };
  }

  @Method("GreetServerStream")
  async *greetServerStream(@Param() req: GreetRequest): AsyncGenerator<GreetResponse> {
    for (let i = 1; i <= SERVER_STREAM_GREETINGS; i++) {
      yield { greeting: `hello, ${req.name} (${i}/${SERVER_STREAM_GREETINGS})` };
    }
  }

  @Method("GreetClientStream")
  async greetClientStream(@Param() reqs: AsyncIterable<GreetRequest>): Promise<GreetResponse> {
    const names: string[] = [];
    for await (const r of reqs) names.push(r.name);
    return { greeting: names.join(", ") };
  }

  @Method("GreetStream")
  async *greetStream(@Param() reqs: AsyncIterable<GreetRequest>): AsyncGenerator<GreetResponse> {
    for await (const r of reqs) yield { greeting: r.name };
  }
}

export { RpcError, Code };
