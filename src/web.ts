/**
 * `triple-rpc/web`: the typed client over `fetch`, for browsers, Deno, Bun, workers and React
 * Native, from the same `@Service` classes and contracts as the Node client. It loads no
 * `node:` module (test/structure checks it). docs/web.md describes it.
 */
export type { WebClientOptions, WebProtocol, WebTokenSource } from "./web/options.js";
export type { FetchFn, WebCallInit, WebHeaders, WebStreamCall, WebStreamTransport } from "./web/transport.js";
export { type WebSocketTransportOptions, webSocketTransport } from "./web/websocket.js";
