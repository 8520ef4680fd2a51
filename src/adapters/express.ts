// Owns `expressTripleMiddleware`. An Express middleware serving triple-rpc services: requests for a
// registered method's path are served (every protocol node:http carries: Triple HTTP, Connect,
// gRPC-Web, … Must not change: the host framework's contract: a request that is not ours goes on
// untouched.
import {
  type HandlerOptions,
  mountedServer,
  type NextFunction,
  type NodeRequest,
  type NodeResponse,
  nodeHandlerOf,
  type TripleHandler,
} from "./node-handler.js";

/**
 * An Express middleware serving triple-rpc services: requests for a registered method's path
 * are served (every protocol node:http carries: Triple HTTP, Connect, gRPC-Web, GET, SSE), the
 * rest go on to the app's own routes. Mounted under a path (`app.use("/rpc", mw)`), it serves
 * `/rpc/<service>/<method>`.
 *
 * Mount it before body parsers (`express.json()` …) or limit those to your own routes: a body
 * a parser already read cannot be read again, and such a request is answered 500 / `internal`
 * with a message saying so (logged once).
 *
 * Express is not loaded by triple-rpc: this is a plain `(req, res, next)` function.
 *
 * ```ts
 * const app = express();
 * app.use(expressTripleMiddleware({ services: [new GreeterImpl()] }));
 * app.use(express.json()); // the app's own routes after it
 * ```
 */
export function expressTripleMiddleware(options: HandlerOptions = {}): TripleHandler & ((req: NodeRequest, res: NodeResponse, next: NextFunction) => void) {
  return nodeHandlerOf(mountedServer(options, "expressTripleMiddleware"));
}
