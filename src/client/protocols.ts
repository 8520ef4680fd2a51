// Owns `PROTOCOLS`. The wire protocols a client speaks, one line each; the client's `protocol`
// option names one. Must not change: the client loads no server code.
import type { ProtocolClient } from "../runtime/client-protocol.js";
import { connectClient } from "../protocol-connect/client.js";
import { grpcClient } from "../protocol-grpc/client.js";
import { grpcWebClient } from "../protocol-grpc-web/client.js";
import { tripleClient } from "../protocol-triple/client.js";
import { websocketClient } from "../protocol-websocket/client.js";

/**
 * The wire protocols a client speaks, one line each; the client's `protocol` option names one.
 * A client that names none speaks the first that claims its `contentType` (Triple for `json`
 * and `proto`, gRPC for `grpc+proto`, `grpc+json` and Dubbo's `serialization`s).
 */
export const PROTOCOLS: readonly ProtocolClient[] = [tripleClient, grpcClient, connectClient, grpcWebClient, websocketClient];
