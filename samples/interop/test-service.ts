import * as os from "node:os";
import * as path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CallContext, Code, Ctx, RpcError, Service } from "../../src/index.js";
import type {
  EchoStatus,
  Empty,
  Payload,
  ResponseParameters,
  SimpleRequest,
  SimpleResponse,
  StreamingInputCallRequest,
  StreamingInputCallResponse,
  StreamingOutputCallRequest,
  StreamingOutputCallResponse,
} from "./messages.js";
import { compressNextResponse } from "./response-compression.js";

/** Where test.proto lives (next to the sources, one level above the compiled file). */
export const TEST_PROTO = path.resolve(__dirname, "../../../samples/interop/test.proto");

/** Request metadata echoed back as initial metadata (interop "Echo Metadata"). */
export const ECHO_INITIAL_KEY = "x-grpc-test-echo-initial";
/** Request metadata echoed back as trailing metadata (interop "Echo Metadata"). */
export const ECHO_TRAILING_KEY = "x-grpc-test-echo-trailing-bin";

/** The only PayloadType of messages.proto. */
const COMPRESSABLE = 0;
/** Payload sizes are int32 on the wire, but a zero-filled buffer that large is a DoS, not a test. */
const MAX_PAYLOAD_BYTES = 64 * 1024 * 1024;
const SERVER_ID = `triple-rpc-interop-${process.pid}`;

function zeroPayload(type: number | undefined, size: number | undefined): Payload {
  const n = size ?? 0;
  if (n < 0 || n > MAX_PAYLOAD_BYTES) {
    throw new RpcError(Code.InvalidArgument, `response size ${n} is out of range 0..${MAX_PAYLOAD_BYTES}`);
  }
  if ((type ?? COMPRESSABLE) !== COMPRESSABLE) {
    // The interop descriptions: an unsupported response_type fails with INVALID_ARGUMENT.
    throw new RpcError(Code.InvalidArgument, `unsupported response_type ${type}`);
  }
  return { type: COMPRESSABLE, body: Buffer.alloc(n) };
}

/** Echo Metadata: the initial key as a response header, the trailing key as a trailer. */
function echoMetadata(ctx: CallContext): void {
  const initial = ctx.requestHeaders.get(ECHO_INITIAL_KEY);
  if (initial !== undefined) ctx.responseHeaders.set(ECHO_INITIAL_KEY, initial);
  const trailing = ctx.requestHeaders.getBinary(ECHO_TRAILING_KEY);
  if (trailing !== undefined) ctx.responseTrailers.set(ECHO_TRAILING_KEY, trailing);
}

/** Echo Status: a request carrying a non-OK `response_status` ends the call with it. */
function failOnEchoStatus(status: EchoStatus | null | undefined): void {
  if (status && status.code !== Code.OK) throw new RpcError(status.code, status.message);
}

/**
 * CompressedRequest: a request that says `expect_compressed` must have arrived compressed. The
 * handler API does not expose per-message flags, so "compressed" means the call declared a
 * `grpc-encoding` other than identity (gRPC clients compress every message of such a call).
 */
function checkExpectCompressed(ctx: CallContext, expect: { value: boolean } | null | undefined): void {
  if (!expect?.value) return;
  const enc = ctx.requestHeaders.get("grpc-encoding");
  if (enc === undefined || enc === "identity") {
    throw new RpcError(Code.InvalidArgument, "expected a compressed request message, got an uncompressed one");
  }
}

/** One response of StreamingOutputCall / FullDuplexCall / HalfDuplexCall, after its interval. */
async function streamedResponse(ctx: CallContext, type: number | undefined, p: ResponseParameters): Promise<StreamingOutputCallResponse> {
  const us = p.interval_us ?? 0;
  // interval_us is a sleep before each response, relative to the previous one; a cancelled
  // call stops sleeping at once.
  if (us > 0) await sleep(us / 1000, undefined, { signal: ctx.signal });
  compressNextResponse(ctx, p.compressed?.value ?? false);
  return { payload: zeroPayload(type, p.size) };
}

/**
 * The standard gRPC interop service `grpc.testing.TestService`, as the official interop test
 * descriptions (grpc/grpc doc/interop-test-descriptions.md) define its server features:
 * EmptyCall, UnaryCall, CacheableUnaryCall, StreamingOutputCall, StreamingInputCall,
 * FullDuplexCall, HalfDuplexCall; Echo Status, Echo Metadata, CompressedRequest,
 * CompressedResponse and `interval_us`. `UnimplementedCall` is left out on purpose: clients
 * test that it answers UNIMPLEMENTED.
 */
@Service("grpc.testing.TestService", { proto: TEST_PROTO })
export class TestServiceImpl {
  /** One empty request, one empty response. */
  async emptyCall(_req: Empty, @Ctx() ctx: CallContext): Promise<Empty> {
    echoMetadata(ctx);
    return {};
  }

  /** A response of `response_size` zero bytes, or the status the request asks for. */
  async unaryCall(req: SimpleRequest, @Ctx() ctx: CallContext): Promise<SimpleResponse> {
    echoMetadata(ctx);
    failOnEchoStatus(req.response_status);
    checkExpectCompressed(ctx, req.expect_compressed);
    compressNextResponse(ctx, req.response_compressed?.value ?? false);
    const res: SimpleResponse = { payload: zeroPayload(req.response_type, req.response_size) };
    if (req.fill_server_id) res.server_id = SERVER_ID;
    res.hostname = os.hostname();
    return res;
  }

  /** Like UnaryCall, with a payload that differs per call and cache headers for proxies. */
  async cacheableUnaryCall(_req: SimpleRequest, @Ctx() ctx: CallContext): Promise<SimpleResponse> {
    echoMetadata(ctx);
    ctx.responseHeaders.set("cache-control", "max-age=60, public");
    return { payload: { type: COMPRESSABLE, body: Buffer.from(String(process.hrtime.bigint())) } };
  }

  /** One response per `response_parameters` entry, each after its `interval_us`. */
  async *streamingOutputCall(req: StreamingOutputCallRequest, @Ctx() ctx: CallContext): AsyncGenerator<StreamingOutputCallResponse> {
    echoMetadata(ctx);
    failOnEchoStatus(req.response_status);
    for (const p of req.response_parameters ?? []) yield await streamedResponse(ctx, req.response_type, p);
  }

  /** Sums the payload sizes of all requests and answers once the client half-closes. */
  async streamingInputCall(requests: AsyncIterable<StreamingInputCallRequest>, @Ctx() ctx: CallContext): Promise<StreamingInputCallResponse> {
    echoMetadata(ctx);
    let total = 0;
    for await (const req of requests) {
      checkExpectCompressed(ctx, req.expect_compressed);
      total += req.payload?.body?.length ?? 0;
    }
    return { aggregated_payload_size: total };
  }

  /** Answers each request as it arrives: one response per `response_parameters` entry. */
  async *fullDuplexCall(requests: AsyncIterable<StreamingOutputCallRequest>, @Ctx() ctx: CallContext): AsyncGenerator<StreamingOutputCallResponse> {
    echoMetadata(ctx);
    for await (const req of requests) {
      // Echo Status: the server stops reading the stream and closes with the asked status.
      failOnEchoStatus(req.response_status);
      for (const p of req.response_parameters ?? []) yield await streamedResponse(ctx, req.response_type, p);
    }
  }

  /** Buffers every request until the client half-closes, then answers them in order. */
  async *halfDuplexCall(requests: AsyncIterable<StreamingOutputCallRequest>, @Ctx() ctx: CallContext): AsyncGenerator<StreamingOutputCallResponse> {
    echoMetadata(ctx);
    const all: StreamingOutputCallRequest[] = [];
    for await (const req of requests) {
      failOnEchoStatus(req.response_status);
      all.push(req);
    }
    for (const req of all) {
      for (const p of req.response_parameters ?? []) yield await streamedResponse(ctx, req.response_type, p);
    }
  }
}
