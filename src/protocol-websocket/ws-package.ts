// Owns `wsPackage`. The `ws` package, for our server's upgrades and the Node client's WebSocket
// calls: loaded on the first WebSocket call, by a name bundlers do not follow (`ws` is … Must not
// change: the framing the web client and the server agree on; bounds on every frame.
import type * as Ws from "ws";
import { runtimePackage } from "../codec/runtime-package.js";

/**
 * The `ws` package, for our server's upgrades and the Node client's WebSocket calls: loaded on the
 * first WebSocket call, by a name bundlers do not follow (`ws` is CommonJS: inside an ESM bundle
 * its `require("events")` would fail), so a bundled app keeps `ws` installed beside the bundle.
 */
export const wsPackage = runtimePackage<typeof Ws>(["w", "s"].join(""), "Triple over WebSocket");
