import { Code } from "../protocol/code.js";
import type { Exchange } from "../transport/exchange.js";
import type { ServerCore } from "./core.js";

/**
 * gRPC over HTTP/2 (spec §4.2). Placeholder until the gRPC work lands: every call gets a
 * trailers-only `unimplemented`.
 */
export class GrpcHandler {
  constructor(private readonly core: ServerCore) {}

  handle(ex: Exchange): void {
    void this.core;
    ex.respondHeadersOnly({
      "content-type": "application/grpc",
      "grpc-status": String(Code.Unimplemented),
      "grpc-message": "gRPC is not implemented yet",
    });
  }
}
