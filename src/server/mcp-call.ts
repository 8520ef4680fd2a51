// Owns `INVALID_PARAMS`, `unknownTool`, `McpToolCall`, `listTools`. JSON-RPC's code for bad
// parameters, an unknown tool among them. Must not change: limits before reading, authorization
// before decoding (docs/security.md).
import { withNumberLimits } from "../codec/big-numbers.js";
import { encodeJsonValue } from "../codec/json-codec.js";
import { badRequestViolations } from "../protocol/bad-request.js";
import { Code, codeName } from "../protocol/code.js";
import { deadlineExceeded } from "../protocol/errors.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { boundMessage } from "../protocol/wire-text.js";
import { CallContext } from "../runtime/context.js";
import { type HandlerOutcome, invokeHandler } from "../runtime/handler-result.js";
import { MAX_VIOLATIONS } from "../codec/validation.js";
import type { ServerCore } from "../runtime/server-core.js";
import type { Exchange } from "../transport/server/exchange.js";
import type { McpTool, McpTools } from "./mcp-tools.js";

/**
 * What a JSON-RPC request answers: a `result` (JSON text), a JSON-RPC `error`, or a bearer token
 * the verifier refused (the whole HTTP request is then answered 401, so the agent learns its
 * token is bad rather than that tools vanished; `recorded` when the call's telemetry has it already).
 */
export type McpAnswer =
  | { readonly result: string }
  | { readonly error: { readonly code: number; readonly message: string } }
  | { readonly unauthenticated: RpcError; readonly recorded?: boolean };

/** JSON-RPC's code for bad parameters, an unknown tool among them. */
export const INVALID_PARAMS = -32602;

/** The answer to a tool the caller may not see: the same as for a tool that does not exist. */
export function unknownTool(name: string): McpAnswer {
  return {
    error: { code: INVALID_PARAMS, message: `unknown tool ${JSON.stringify(boundMessage(name, 100))}: tools/list names the tools this caller may call` },
  };
}

/** The longest error text a tool result carries, in UTF-8 bytes (a handler's message may echo a whole request). */
const MAX_ERROR_TEXT = 16 * 1024;

/** A failed call as a tool result the model can read: the code, the message, and every violation of a failed validation. */
function errorResult(err: RpcError, fieldPrefix?: string): McpAnswer {
  let text = `${codeName(err.code)}: ${err.message}`;
  const violations = err.code === Code.InvalidArgument ? badRequestViolations(err) : [];
  if (violations.length > 0) {
    text = `invalid_argument: the arguments break ${violations.length} rule${violations.length === 1 ? "" : "s"}, so the tool did not run:`;
    for (const v of violations) {
      const field = fieldPrefix !== undefined && v.field.startsWith(fieldPrefix) ? v.field.slice(fieldPrefix.length) : v.field;
      text += `\n- ${field}: ${v.description}`;
    }
    if (violations.length >= MAX_VIOLATIONS) text += `\n(validation stops listing at ${MAX_VIOLATIONS}; there may be more)`;
  }
  return { result: `{"content":[{"type":"text","text":${JSON.stringify(boundMessage(text, MAX_ERROR_TEXT))}}],"isError":true}` };
}

/** True when the request carries credentials (a refused one is then the caller's to fix, not a hidden tool). */
function hasCredentials(ex: Exchange): boolean {
  const a = ex.headers[H.authorization];
  return a !== undefined && a !== "";
}

/**
 * One `tools/call`: the call's context (protocol `mcp`, tracked for shutdown and telemetry, the
 * endpoint's deadline), the method's bearer auth on the request headers, the arguments bound by
 * the binder's rules, then the handler through its invoker (interceptors, validation, masked
 * errors): what every protocol does. Resolves once with the answer, or with undefined when the
 * peer went away.
 */
export class McpToolCall implements HandlerOutcome {
  private readonly ctx: CallContext;
  private timer: NodeJS.Timeout | undefined = undefined;
  private finished = false;
  private resolve!: (a: McpAnswer | undefined) => void;
  readonly answer: Promise<McpAnswer | undefined>;

  constructor(
    private readonly core: ServerCore,
    ex: Exchange,
    private readonly tool: McpTool,
    private readonly args: Record<string, unknown>,
    timeoutMs: number | undefined,
    /** The request body's size when it held this call alone (telemetry's request size); undefined in a batch. */
    bodyBytes: number | undefined,
  ) {
    this.answer = new Promise((r) => {
      this.resolve = r;
    });
    const route = tool.route;
    this.ctx = new CallContext(route.descriptor, ex.headers, "mcp", ex.httpVersion, ex.peer, timeoutMs);
    core.track(this.ctx, ex);
    if (bodyBytes !== undefined) this.ctx.observer?.received(bodyBytes);
    if (timeoutMs !== undefined) this.timer = setTimeout(() => this.onDeadline(timeoutMs), timeoutMs);
    const authorize = route.authorize;
    if (authorize === undefined) this.run();
    else
      authorize(this.ctx).then(
        () => this.finished || this.run(),
        (e) => this.refuse(RpcError.from(e), ex),
      );
  }

  private run(): void {
    let input: unknown[];
    try {
      input = withNumberLimits(this.core.limits, () => this.tool.bind(this.args));
    } catch (e) {
      this.handlerFailed(RpcError.from(e));
      return;
    }
    invokeHandler(this.tool.route, this.ctx, input, this);
  }

  /** Auth failed: a refused token is the request's 401; a missing token or role hides the tool. */
  private refuse(err: RpcError, ex: Exchange): void {
    if (this.finished) return;
    this.end(err);
    if (err.code === Code.Unauthenticated && hasCredentials(ex)) this.resolve({ unauthenticated: err, recorded: true });
    else if (err.code === Code.Unauthenticated || err.code === Code.PermissionDenied) this.resolve(unknownTool(this.tool.name));
    else this.resolve(errorResult(err));
  }

  handlerReturned(value: unknown): void {
    if (this.finished) return;
    let text: string;
    try {
      text = encodeJsonValue(this.tool.route.descriptor, value);
    } catch (e) {
      this.handlerFailed(new RpcError(Code.Internal, `cannot encode the result: ${(e as Error).message}`, { cause: e }));
      return;
    }
    const output = this.tool.output;
    if (output === "object" && text === "null") {
      this.handlerFailed(new RpcError(Code.Internal, "the method returned null where its declared result is an object"));
      return;
    }
    this.ctx.observer?.sent(text.length);
    this.end(undefined);
    const content = `{"content":[{"type":"text","text":${JSON.stringify(text)}}]`;
    if (output === "object") this.resolve({ result: `${content},"structuredContent":${text}}` });
    else if (output === "wrapped") this.resolve({ result: `${content},"structuredContent":{"result":${text}}}` });
    else this.resolve({ result: `${content}}` });
  }

  handlerFailed(reason: unknown): void {
    if (this.finished) return;
    const err = RpcError.from(reason);
    this.end(err);
    this.resolve(errorResult(err, this.tool.fieldPrefix));
  }

  /** The peer went away (or the server gave up on the exchange): the handler's signal fires, nothing is answered. */
  abort(err: RpcError): void {
    if (this.finished) return;
    this.end(err);
    this.ctx.abort(err);
    this.resolve(undefined);
  }

  private onDeadline(timeoutMs: number): void {
    const err = deadlineExceeded(timeoutMs);
    this.ctx.abort(err);
    this.handlerFailed(err);
  }

  private end(err: RpcError | undefined): void {
    this.finished = true;
    if (this.timer) clearTimeout(this.timer);
    this.core.untrack(this.ctx, err);
  }
}

/**
 * `tools/list` for this caller: every tool whose method needs no auth, and the protected ones
 * the caller's bearer token passes (each checked as a call of that method would be). Without an
 * `authorization` header the protected tools are left out unasked; a token the verifier refuses
 * answers the request 401. The first protected tool is checked alone, the others then all at
 * once: a refused token costs one verification, not one per tool.
 */
export async function listTools(tools: McpTools, ex: Exchange): Promise<McpAnswer> {
  const all = [...tools.all()];
  const credentials = hasCredentials(ex);
  const check = async (tool: McpTool): Promise<string | RpcError | undefined> => {
    const authorize = tool.route.authorize;
    if (authorize === undefined) return tool.json;
    if (!credentials) return undefined;
    try {
      await authorize(new CallContext(tool.route.descriptor, ex.headers, "mcp", ex.httpVersion, ex.peer, undefined));
      return tool.json;
    } catch (e) {
      const err = RpcError.from(e);
      return err.code === Code.Unauthenticated ? err : undefined;
    }
  };
  const first = all.findIndex((t) => t.route.authorize !== undefined);
  const firstResult = credentials && first >= 0 ? await check(all[first]) : undefined;
  if (firstResult instanceof RpcError) return { unauthenticated: firstResult };
  const results = await Promise.all(all.map((t, i) => (i === first && credentials ? firstResult : check(t))));
  const parts: string[] = [];
  for (const x of results) {
    if (x instanceof RpcError) return { unauthenticated: x };
    if (x !== undefined) parts.push(x);
  }
  return { result: `{"tools":[${parts.join(",")}]}` };
}
