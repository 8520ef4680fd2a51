/**
 * `triple-rpc/web`: the typed client over `fetch`, for browsers, Deno, Bun, workers and React
 * Native, from the same `@Service` classes and contracts as the Node client (`triple-rpc/client`).
 * It loads no `node:` module (test/structure checks it); protobuf support is loaded only when a
 * client needs it. docs/web.md describes it.
 *
 * ```ts
 * import { createClient } from "triple-rpc/web";
 * import { GreetContract } from "./greet-contract"; // imports only triple-rpc/contract
 *
 * const greet = createClient(GreetContract, { baseUrl: "https://api.example.com" });
 * await greet.greet("web");
 * ```
 */
export { createClient } from "./web/create-client.js";
export { mutationOptions, queryKey, queryOptions, type RpcMutationOptions, type RpcQueryOptions } from "./web/query.js";
export type { Client, ClientMethod, ClientResult } from "./client/create-client.js";
export type { ClientCall, ClientInterceptor, ClientNext } from "./client/interceptor.js";
export { callOptions, type CallOptions } from "./runtime/call-options.js";
export { Code, codeFromName, codeName } from "./protocol/code.js";
export { RpcError, type RpcErrorOptions, type ErrorDetail, type MetadataInit } from "./protocol/rpc-error.js";
export { BAD_REQUEST_TYPE, badRequestViolations } from "./entry-bindings.js";
export type { FieldViolation } from "./protocol/bad-request.js";
export type { WebClientOptions, WebProtocol, WebTokenSource } from "./web/options.js";
export type { FetchFn, WebCallInit, WebHeaders, WebStreamCall, WebStreamTransport } from "./web/transport.js";
export { type WebSocketTransportOptions, webSocketTransport } from "./web/websocket.js";
