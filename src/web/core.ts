// Owns `WebCore`. The protocol-neutral core of the web client: options, headers and credentials,
// the call's scope (deadline, cancellation), the safe-retry rule of unary calls. Must not change:
// no node: import and no server code: it runs in browsers (the bundle budget test checks).
import { Code } from "../protocol/code.js";
import { H } from "../protocol/headers.js";
import { retryableCode } from "../protocol/retry-rule.js";
import { RpcError } from "../protocol/rpc-error.js";
import type { CallOptions } from "../runtime/call-options.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { WebClientOptions } from "./options.js";
import { isNetworkFailure, WebScope } from "./scope.js";
import { checkedOptions, type CheckedOptions } from "./settings.js";
import type { WebCallInit } from "./transport.js";
import { codecOf, type FetchCall, TripleWeb, type WebCodec, type WebFormat, type WebWireMethod } from "./wire.js";

/** A method prepared once per client: its URL, and its protocol half built on the first call. */
export interface WebMethod {
  readonly md: MethodDescriptor;
  readonly url: string;
  /** The protocol half (its codec loaded on first use). */
  wire(): Promise<WebWireMethod>;
  /** The codec of client and bidi streams (the streams transport's messages). */
  streamCodec(): Promise<WebCodec>;
}

function once<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    p ??= make();
    // A failed load (a network error fetching a chunk) is tried again on the next call.
    p.catch(() => {
      p = undefined;
    });
    return p;
  };
}

/** Joins metadata values as headers: one string per name. */
function headerValue(v: string | readonly string[]): string {
  return typeof v === "string" ? v : v.join(", ");
}

/**
 * The protocol-neutral core of the web client: options, headers and credentials, the call's
 * scope (deadline, cancellation), the safe-retry rule of unary calls; the protocol halves
 * (wire.ts, grpc-web.ts) carry the calls.
 */
export class WebCore {
  readonly settings: CheckedOptions;

  constructor(options: WebClientOptions) {
    this.settings = checkedOptions(options);
  }

  prepare(md: MethodDescriptor): WebMethod {
    const s = this.settings;
    const url = `${s.baseUrl}${md.path}`;
    const json = s.contentType === "json";
    const fmt: WebFormat = json ? (s.protocol === "triple" ? "json" : "protojson") : "proto";
    // Connect's code (connect.ts) is loaded on the first call that uses it, like gRPC-Web's.
    const connect = once(async () => {
      const [{ ConnectWeb }, codec] = await Promise.all([import("./connect.js"), codecOf(md, json ? "protojson" : "proto")]);
      return new ConnectWeb(md, codec, json, s.useGet);
    });
    const wire = once(async (): Promise<WebWireMethod> => {
      if (s.protocol === "connect") return connect();
      // Triple HTTP: IDL methods in the client's format, IDL-less ones always JSON (the only body they take there).
      const tripleJson = json || md.requestType === undefined;
      if (s.protocol === "triple") return new TripleWeb(await codecOf(md, tripleJson ? "json" : "proto"), tripleJson, connect);
      const [{ GrpcWebWeb }, codec] = await Promise.all([import("./grpc-web.js"), codecOf(md, fmt)]);
      return new GrpcWebWeb(codec, json, s.grpcWebText);
    });
    return { md, url, wire, streamCodec: once(() => codecOf(md, json ? "json" : "proto")) };
  }

  /** The headers of one call: the client's (version, group, metadata), the call's metadata, the token. */
  async headers(opts: CallOptions | undefined): Promise<Record<string, string>> {
    const h: Record<string, string> = { ...this.settings.headers };
    const meta = opts?.metadata;
    if (meta) for (const k of Object.keys(meta)) h[k.toLowerCase()] = headerValue(meta[k]);
    const token = this.settings.token;
    if (token !== undefined) h[H.authorization] = `Bearer ${typeof token === "string" ? token : await token()}`;
    return h;
  }

  private async fetchCall(pm: WebMethod, opts: CallOptions | undefined, scope: WebScope): Promise<FetchCall> {
    const s = this.settings;
    return { url: pm.url, headers: await this.headers(opts), scope, fetch: s.fetch, maxBytes: s.maxBytes, credentials: s.credentials, options: opts };
  }

  /** A call's scope: the call's timeout over the client's. */
  scope(opts: CallOptions | undefined): WebScope {
    return new WebScope(opts?.timeoutMs ?? this.settings.timeout, opts?.signal);
  }

  /**
   * A unary call, retried (at most `retries` more times, within the deadline) while the error
   * is one the safe-retry table allows: the server's `unavailable`/`unknown` answer (and for an
   * idempotent method `resource_exhausted`/`aborted`), a network failure only for an idempotent
   * method (the request may have reached the handler).
   */
  async unary(pm: WebMethod, args: readonly unknown[], opts: CallOptions | undefined): Promise<unknown> {
    const scope = this.scope(opts);
    try {
      const wire = await pm.wire();
      const call = await this.fetchCall(pm, opts, scope);
      for (let left = this.settings.retries; ; left--) {
        try {
          return await wire.unary(args, call);
        } catch (e) {
          const err = scope.failure(e);
          const idempotent = pm.md.idempotent;
          const again = isNetworkFailure(err) ? idempotent : retryableCode(err.code, idempotent);
          if (left <= 0 || !again || scope.signal.aborted) throw err;
        }
      }
    } catch (e) {
      throw scope.failure(e);
    } finally {
      scope.release();
    }
  }

  /** A server-streaming call: the messages as they arrive; breaking out of the loop cancels the call. */
  async *serverStream(pm: WebMethod, args: readonly unknown[], opts: CallOptions | undefined): AsyncGenerator<unknown> {
    const scope = this.scope(opts);
    try {
      const wire = await pm.wire();
      yield* wire.serverStream(args, await this.fetchCall(pm, opts, scope));
    } catch (e) {
      throw scope.failure(e);
    } finally {
      // Ends the fetch when the caller stopped early (break, return, throw).
      scope.end(new RpcError(Code.Cancelled, "the caller stopped reading the stream"));
    }
  }

  /** What a streams transport is handed for one client- or bidi-streaming call. */
  async streamInit(pm: WebMethod, opts: CallOptions | undefined, scope: WebScope): Promise<WebCallInit> {
    const s = this.settings;
    const headers = await this.headers(opts);
    const contentType = s.contentType === "json" ? "application/json" : "application/proto";
    headers[H.contentType] = contentType;
    const ms = scope.remaining();
    if (ms !== undefined) headers[H.triServiceTimeout] = String(ms);
    return { method: pm.md, url: pm.url, headers, contentType, signal: scope.signal, deadline: scope.deadline, maxBytes: s.maxBytes };
  }
}
