import type { CallContext } from "../../src/index.js";
import { responseCompression } from "../../src/protocol-grpc/responder.js";

/**
 * CompressedResponse: the next response message goes out compressed (`true`, when the client
 * accepts one of our encodings) or uncompressed (`false`), whatever the server's default.
 */
export function compressNextResponse(ctx: CallContext, compress: boolean): void {
  ctx.set(responseCompression, compress);
}
