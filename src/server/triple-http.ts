import { PassThrough } from "node:stream";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import type { RequestCodec, ResponseCodec } from "../codec/codec.js";
import { requestCodecFor, responseCodecFor, supportedRequestTypes } from "../codec/registry.js";
import { unsupportedMediaType } from "../codec/bind-error.js";
import { Code } from "../protocol/code.js";
import {
  COMPRESS_MIN_BYTES,
  type Compression,
  HTTP_ACCEPT_ENCODING,
  HTTP_COMPRESSIONS,
  negotiateEncoding,
} from "../protocol/compression.js";
import { type MediaType, parseMediaType } from "../protocol/content-type.js";
import { H } from "../protocol/headers.js";
import { RpcError } from "../protocol/rpc-error.js";
import { parseTriTimeout } from "../protocol/timeout.js";
import type { Exchange, OutHeaders } from "../transport/exchange.js";
import { bodyTooLarge, collectBody } from "./body.js";
import { CallContext } from "./context.js";
import type { ServerCore } from "./core.js";
import { sendHttpError } from "./error-response.js";
import type { RegisteredMethod } from "./router.js";
import { serveServerStreamAsSse } from "./sse.js";

type Headers = Readonly<Record<string, string | string[] | undefined>>;

function one(h: Headers, name: string): string | undefined {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
}

const PROTOCOL_VERSION = /^1(\.\d+){0,2}$/;

function checkProtocolVersion(h: Headers, required: boolean): void {
  const v = one(h, H.triProtocolVersion);
  if (v === undefined) {
    if (required) {
      throw new RpcError(Code.InvalidArgument, 'missing required header: set tri-protocol-version to "1.0.0"', {
        legacyStatus: 40,
      });
    }
    return;
  }
  if (!PROTOCOL_VERSION.test(v.trim())) {
    throw new RpcError(Code.InvalidArgument, `unsupported tri-protocol-version "${v}": this server speaks 1.x`, {
      legacyStatus: 40,
    });
  }
}

/** Picks the response codec: an `Accept` naming another supported type wins over the default. */
function negotiateResponse(accept: string | undefined, fallback: ResponseCodec): ResponseCodec {
  if (accept === undefined || accept === "*/*" || accept === fallback.mediaType) return fallback;
  // The default keeps winning unless another supported type is strictly preferred: a browser's
  // `text/html,…,application/xml;q=0.9,*/*;q=0.8` must not turn a JSON call into XML.
  const family = `${fallback.mediaType.slice(0, fallback.mediaType.indexOf("/"))}/*`;
  let fallbackQ = 0;
  let best: ResponseCodec | undefined;
  let bestQ = 0;
  for (const part of accept.split(",")) {
    const [type, ...params] = part.split(";");
    let q = 1;
    for (const p of params) {
      const [k, v] = p.split("=");
      if (k.trim() === "q") q = Number(v);
    }
    if (!(q > 0)) continue;
    const t = type.trim().toLowerCase();
    if (t === fallback.mediaType || t === "*/*" || t === family) {
      if (q > fallbackQ) fallbackQ = q;
      continue;
    }
    const c = responseCodecFor(t);
    if (c && q > bestQ) {
      best = c;
      bestQ = q;
    }
  }
  return best && bestQ > fallbackQ ? best : fallback;
}

function decompressStream(c: Compression) {
  return c.name === "br" ? createBrotliDecompress() : c.name === "deflate" ? createInflate() : createGunzip();
}

/**
 * The Triple HTTP unary protocol (spec §4.1): `POST /<interface>/<method>` over HTTP/1.1 or
 * HTTP/2 with a Bare-Message body. Straight-line on the hot path: one body read, one decode, one
 * call, one encode; no async generators, no per-call option parsing beyond the headers.
 */
export class TripleHttpHandler {
  constructor(private readonly core: ServerCore) {}

  handle(ex: Exchange): void {
    let route: RegisteredMethod;
    let reqCodec: RequestCodec;
    let mt: MediaType;
    let timeoutMs: number | undefined;
    let compression: Compression | undefined;
    const h = ex.headers;
    try {
      if (ex.method !== "POST") {
        ex.discardBody();
        sendHttpError(
          ex,
          new RpcError(Code.Unimplemented, `HTTP method ${ex.method} is not supported: use POST`, {
            httpStatus: 405,
            legacyStatus: 40,
          }),
          { allow: "POST" },
        );
        return;
      }
      if (ex.headerCount > this.core.limits.maxHeaderCount) {
        throw new RpcError(
          Code.ResourceExhausted,
          `too many request headers: ${ex.headerCount} (limit ${this.core.limits.maxHeaderCount})`,
          { httpStatus: 431 },
        );
      }
      route = this.core.router.resolve(ex.path, h);
      checkProtocolVersion(h, this.core.requireProtocolVersion);
      const ct = one(h, H.contentType);
      const parsed = parseMediaType(ct);
      const codec = parsed && requestCodecFor(parsed.type);
      if (!codec || !parsed) {
        throw unsupportedMediaType(
          ct
            ? `unsupported Content-Type "${ct}"; supported: ${supportedRequestTypes().join(", ")}`
            : `missing Content-Type; supported: ${supportedRequestTypes().join(", ")}`,
        );
      }
      reqCodec = codec;
      mt = parsed;
      timeoutMs =
        parseTriTimeout(H.triServiceTimeout, one(h, H.triServiceTimeout)) ??
        parseTriTimeout(H.restServiceTimeout, one(h, H.restServiceTimeout));
      const ce = one(h, H.contentEncoding);
      if (ce !== undefined && ce !== "" && ce.toLowerCase() !== "identity") {
        compression = HTTP_COMPRESSIONS.get(ce.trim().toLowerCase());
        if (!compression) {
          throw unsupportedMediaType(`unsupported Content-Encoding "${ce}"; supported: ${HTTP_ACCEPT_ENCODING}, identity`);
        }
      }
      const kind = route.descriptor.kind;
      if (kind === "client_streaming" || kind === "bidi_streaming") {
        throw new RpcError(
          Code.Unimplemented,
          `${route.descriptor.path} is ${kind.replace("_", "-")}: call it with gRPC over HTTP/2 (Content-Type application/grpc)`,
          { httpStatus: 505, legacyStatus: 40 },
        );
      }
      if (this.core.draining) throw new RpcError(Code.Unavailable, "the server is shutting down");
      const declared = one(h, "content-length");
      if (!compression && declared !== undefined && Number(declared) > this.core.limits.maxBodyBytes) {
        throw bodyTooLarge(this.core.limits.maxBodyBytes);
      }
    } catch (e) {
      ex.discardBody((e as RpcError).httpStatus === 413);
      sendHttpError(ex, e);
      return;
    }
    this.call(ex, route, reqCodec, mt, timeoutMs, compression);
  }

  private call(
    ex: Exchange,
    route: RegisteredMethod,
    reqCodec: RequestCodec,
    mt: MediaType,
    timeoutMs: number | undefined,
    compression: Compression | undefined,
  ): void {
    const md = route.descriptor;
    const h = ex.headers;
    const ctx = new CallContext(md, h, "triple", ex.httpVersion, ex.peer, timeoutMs);
    const core = this.core;
    core.track(ctx, ex);
    const untrack = () => core.untrack(ctx);
    const limits = this.core.limits;
    let finished = false;
    let timer: NodeJS.Timeout | undefined;
    const fail = (e: unknown) => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      untrack();
      if (!ex.aborted) ex.discardBody((e as RpcError).httpStatus === 413);
      sendHttpError(ex, e);
    };
    ex.onAbort(() => {
      if (finished) return;
      finished = true;
      if (timer) clearTimeout(timer);
      untrack();
      ctx.abort(new RpcError(Code.Cancelled, "the client cancelled the call"));
    });
    if (timeoutMs !== undefined) {
      timer = setTimeout(() => {
        const err = new RpcError(Code.DeadlineExceeded, `the call exceeded its timeout of ${timeoutMs} ms`, {
          legacyStatus: 31,
        });
        ctx.abort(err);
        fail(err);
      }, timeoutMs);
    }

    const respCodec = negotiateResponse(
      one(h, H.accept),
      responseCodecFor(reqCodec.responseMediaType ?? mt.type) ?? (responseCodecFor("application/json") as ResponseCodec),
    );

    const onArgs = (args: unknown[]) => {
      if (finished) return;
      if (md.kind === "server_streaming") {
        finished = true;
        if (timer) clearTimeout(timer);
        serveServerStreamAsSse(ex, route, ctx, args, respCodec, untrack, timeoutMs);
        return;
      }
      let result: unknown;
      try {
        result = route.invoke(ctx, args);
      } catch (e) {
        fail(e);
        return;
      }
      if (result !== null && typeof result === "object" && typeof (result as Promise<unknown>).then === "function") {
        (result as Promise<unknown>).then(onResult, fail);
      } else {
        onResult(result);
      }
    };

    const onResult = (value: unknown) => {
      if (finished) return;
      let body: Buffer | string;
      try {
        body = respCodec.encode(md, value);
      } catch (e) {
        fail(new RpcError(Code.Internal, `cannot encode the response: ${(e as Error).message}`, { cause: e }));
        return;
      }
      finished = true;
      if (timer) clearTimeout(timer);
      untrack();
      const headers: OutHeaders = { "content-type": respCodec.mediaType };
      ctx.copyResponseHeadersTo(headers);
      ctx.copyResponseTrailersTo(headers);
      const len = typeof body === "string" ? body.length : body.byteLength;
      if (len >= COMPRESS_MIN_BYTES) {
        const c = negotiateEncoding(one(h, H.acceptEncoding), HTTP_COMPRESSIONS);
        if (c) {
          body = c.compress(typeof body === "string" ? Buffer.from(body) : body);
          headers["content-encoding"] = c.name;
        }
      }
      ex.respond(200, headers, body);
    };

    if (reqCodec.decodeStream) {
      let stream = ex.body;
      if (compression) {
        const d = decompressStream(compression);
        ex.body.on("error", (e) => d.destroy(e));
        stream = ex.body.pipe(d).on("error", () => {});
      } else {
        stream = ex.body.pipe(new PassThrough());
      }
      reqCodec.decodeStream(md, stream, mt, limits).then(onArgs, fail);
      return;
    }
    collectBody(ex.body, compression ? limits.maxBodyBytes : limits.maxBodyBytes, (err, raw) => {
      if (err) return fail(err);
      let args: unknown[];
      try {
        const data = compression ? compression.decompress(raw, limits.maxBodyBytes) : raw;
        args = (reqCodec.decode as NonNullable<RequestCodec["decode"]>)(md, data, mt, limits);
      } catch (e) {
        fail(e);
        return;
      }
      onArgs(args);
    });
  }
}
