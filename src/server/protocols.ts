// The wire protocols a server speaks, one line each, in the order they claim an exchange.
// The core (server.ts) reaches protocols only through this list; the order is the precedence
// of claims, and the last protocol claims whatever no other did.
import { connectServer } from "../protocol-connect/server-handler.js";
import { grpcServer } from "../protocol-grpc/server-handler.js";
import { grpcWebServer } from "../protocol-grpc-web/server-handler.js";
import { tripleServer } from "../protocol-triple/server-handler.js";
import { websocketServer } from "../protocol-websocket/server-handler.js";
import type { ServerProtocol } from "../runtime/server-protocol.js";
import { mcpServer } from "./mcp-endpoint.js";

/**
 * The server's protocols, first claimant wins: MCP by its path (when `mcp` is on), Triple over
 * WebSocket by the CONNECT method (HTTP/2 extended CONNECT, whatever its headers; HTTP/1.1
 * upgrades reach it apart), gRPC-Web by its content type (before gRPC, whose `application/grpc`
 * prefix it shares), gRPC and Dubbo's wrapper by content type, Connect (a GET with its query to
 * an RPC path; a stream content type or `connect-protocol-version`), and Triple HTTP last: unary,
 * GET, SSE and REST routes, and every request no other protocol claimed.
 */
export const SERVER_PROTOCOLS: readonly ServerProtocol[] = [mcpServer, websocketServer, grpcWebServer, grpcServer, connectServer, tripleServer];
