// Owns `JSON_STREAM_HINT`, `withJsonStreamHint`. A Triple client's streams go as
// `application/grpc+json` when its contentType is json (the default). Must not change: Triple's
// wire rules as Dubbo Java speaks them (tri-* headers, the HTTP unary and stream forms).
import { RpcError } from "../protocol/rpc-error.js";
import type { StreamCall, WireMethod } from "../runtime/client-protocol.js";

/**
 * grpc-js ("Error deserializing request") and grpcio ("Exception deserializing request!") read
 * protobuf only: that is their whole answer to a JSON message.
 */
const UNREADABLE = /deserializ/i;

const JSON_STREAM_HINT =
  'the provider could not read this stream\'s JSON messages (application/grpc+json, how a client whose contentType is json streams): a plain gRPC server reads protobuf only, so call it with protocol: "grpc" (or contentType: "proto")';

/** The error with the hint when it is a gRPC server's refusal of a JSON message; else as it is. */
function hinted(e: unknown): unknown {
  if (!(e instanceof RpcError) || !UNREADABLE.test(e.rawMessage ?? e.message)) return e;
  const { metadata, httpStatus, legacyStatus, details } = e;
  return new RpcError(e.code, `${e.message} (${JSON_STREAM_HINT})`, { metadata, httpStatus, legacyStatus, details, rawMessage: e.rawMessage, cause: e });
}

function rethrowHinted(e: unknown): never {
  throw hinted(e);
}

/** The responses of a call, their failure hinted. */
function hintedResponses(it: AsyncIterator<unknown> & AsyncIterable<unknown>): AsyncIterator<unknown> & AsyncIterable<unknown> {
  const out: AsyncIterator<unknown> & AsyncIterable<unknown> = {
    next: () => it.next().catch(rethrowHinted),
    return: (v?: unknown) => (it.return ? it.return(v) : Promise.resolve({ done: true, value: v })),
    [Symbol.asyncIterator]: () => out,
  };
  return out;
}

function hintedCall(call: StreamCall): StreamCall {
  const responses = call.responses && hintedResponses(call.responses);
  return {
    responses,
    result: () => call.result().catch(rethrowHinted),
    sendArgs: (payload) => call.sendArgs(payload),
    send: (value) => call.send(value),
    end: () => call.end(),
    cancel: (reason) => call.cancel(reason),
    onSettled: (stop) => call.onSettled(stop),
  };
}

/**
 * A Triple client's streams go as `application/grpc+json` when its contentType is json (the
 * default); a plain gRPC server's refusal of them gets the same kind of hint as a unary call's.
 */
export function withJsonStreamHint(m: WireMethod): WireMethod {
  return {
    protocol: m.protocol,
    headers: m.headers,
    unary: (args, headers, scope, options) => m.unary(args, headers, scope, options),
    open: (provider, headers, scope, options, mode) => m.open(provider, headers, scope, options, mode).then(hintedCall, rethrowHinted),
    encodeArgs: (args) => m.encodeArgs(args),
  };
}
