import type { TypeDesc } from "../../service/type-desc.js";

export class JsonbError extends Error {
  override name = "JsonbError";
}

export function readJsonb(_bytes: Uint8Array, _limits: { maxDepth?: number; maxNodes?: number }): unknown {
  throw new JsonbError("JSONB is not read yet");
}

export function writeJsonb(_v: unknown, _t: TypeDesc): Buffer {
  throw new JsonbError("JSONB is not written yet");
}
