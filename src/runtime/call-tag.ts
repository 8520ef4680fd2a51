// Owns `TAG_KEY`, `FORCE_TAG_KEY`, `TAG_HEADER`, `runWithTag`, … The attachment (header) names
// Dubbo uses for them. Must not change: the rules every protocol relies on (docs/architecture.md).
import { AsyncLocalStorage } from "node:async_hooks";
import { Code } from "../protocol/code.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { CallOptions } from "./call-options.js";

/** Dubbo's routing tag of a call: `dubbo.tag`, and `dubbo.force.tag` when given. */
export interface CallTag {
  readonly tag: string;
  readonly force?: boolean;
}

/** The attachment (header) names Dubbo uses for them. */
export const TAG_KEY = "dubbo.tag";
export const FORCE_TAG_KEY = "dubbo.force.tag";
/** The header Dubbo's Spring Boot interceptor reads a tag from (`dubbo-tag`). */
const TAG_HEADER = "dubbo-tag";

const store = new AsyncLocalStorage<CallTag>();
/** Set once a tagged call ran: until then {@link currentTag} costs one boolean test. */
let used = false;

/**
 * Runs a handler with the tag of its incoming call, so the calls it makes through our clients
 * carry the same tag (a gray request stays on gray providers all the way down).
 */
export function runWithTag<R>(tag: CallTag, fn: () => R): R {
  used = true;
  return store.run(tag, fn);
}

/** The tag of the incoming call whose handler is running, if it had one. */
function currentTag(): CallTag | undefined {
  return used ? store.getStore() : undefined;
}

/** The tag an incoming call's headers carry: `dubbo.tag` (Triple's attachment), else `dubbo-tag`. */
export function tagOfHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): CallTag | undefined {
  const raw = headers[TAG_KEY] ?? headers[TAG_HEADER];
  if (raw === undefined) return undefined;
  const tag = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  if (!tag) return undefined;
  const f = headers[FORCE_TAG_KEY];
  const force = (Array.isArray(f) ? f[0] : f)?.trim().toLowerCase();
  return force === "true" || force === "false" ? { tag, force: force === "true" } : { tag };
}

/**
 * The tag a call sends, when it differs from the client's: the call's `tag` / `forceTag`, else
 * the tag of the incoming call whose handler makes this call (undefined: the client's, if any).
 */
export function callTag(opts: Pick<CallOptions, "tag" | "forceTag"> | undefined): CallTag | undefined {
  if (opts?.tag !== undefined || opts?.forceTag !== undefined) {
    const carried = currentTag();
    const tag = opts.tag ?? carried?.tag;
    if (typeof tag !== "string" || tag === "" || /[\r\n]/.test(tag)) {
      throw new RpcError(Code.InvalidArgument, `the call's tag must be a non-empty string on one line (Dubbo's dubbo.tag), got ${JSON.stringify(opts.tag)}`);
    }
    return { tag, force: opts.forceTag ?? carried?.force };
  }
  return currentTag();
}
