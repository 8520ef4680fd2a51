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

/**
 * The sample greeting service (spec §2.1): `Greet` accepts exactly one name and answers
 * `greeting` = that name; any other name fails with `name is not right: <name>`.
 */
@Service("greet.GreetService", { proto: GREET_PROTO })
export class GreetServiceImpl {
  constructor(readonly acceptedName = "triple") {}

  @Method("Greet")
  async greet(@Param() req: GreetRequest): Promise<GreetResponse> {
    if (req.name !== this.acceptedName) throw new Error(`name is not right: ${req.name}`);
    return { greeting: req.name };
  }
}

export { RpcError, Code };
