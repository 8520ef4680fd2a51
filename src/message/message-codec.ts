// Owns Node.js's `messageCodec`: method-codec.ts's, with Dubbo's Java serializations registered.
// Must not change: they load by a `require` on the first hessian2 or fastjson2 message, so a
// process that never sees one does not load them; the web client imports method-codec.ts instead.
import type * as JavaCodec from "./java-wrapper-codec.js";
import type * as JavaSer from "./java-serialization.js";
import { useJavaSerializations } from "./method-codec.js";

useJavaSerializations(() => ({
  ...(require("./java-wrapper-codec.js") as typeof JavaCodec),
  ...(require("./java-serialization.js") as typeof JavaSer),
}));

export type { MessageCodec } from "./codec-types.js";
export { messageCodec } from "./method-codec.js";
