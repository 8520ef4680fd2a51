// Owns `SCOPE_NAME`, `ATTR_RPC_SYSTEM_NAME`, `ATTR_RPC_METHOD`, `ATTR_RPC_STATUS_CODE`, …
// Instrumentation scope name (tracer and meter). Must not change: the OpenTelemetry names, and no
// cost per call when telemetry is off.
import { Code, codeName } from "../protocol/code.js";

/**
 * The OpenTelemetry names triple-rpc emits, all in one place: the RPC semantic conventions were
 * renamed several times (`rpc.system` → `rpc.system.name`, `rpc.grpc.status_code` →
 * `rpc.response.status_code` → `rpc.status_code`, `rpc.server.duration` in ms →
 * `rpc.server.call.duration` in s), so a future rename is a change to this file only. The values
 * follow the current RPC conventions (Release Candidate for gRPC and Dubbo); the size histograms
 * and the active-calls counter are outside them (see docs/observability.md).
 */

/** Instrumentation scope name (tracer and meter). */
export const SCOPE_NAME = "triple-rpc";

export const ATTR_RPC_SYSTEM_NAME = "rpc.system.name";
/** Fully qualified: `pkg.Service/Method`. */
export const ATTR_RPC_METHOD = "rpc.method";
/** The status code as a string (`OK`, `NOT_FOUND`). */
export const ATTR_RPC_STATUS_CODE = "rpc.status_code";
/** The method as the request named it, when `rpc.method` is `_OTHER` (a method the server does not know). */
export const ATTR_RPC_METHOD_ORIGINAL = "rpc.method_original";
/** `rpc.method` of a call to a method the server does not know. */
export const RPC_METHOD_OTHER = "_OTHER";
export const ATTR_ERROR_TYPE = "error.type";
export const ATTR_SERVER_ADDRESS = "server.address";
export const ATTR_SERVER_PORT = "server.port";

/**
 * The attributes a server span starts with (the method, system and addresses, set at start so
 * samplers see them). One object literal with the names above spelled out: this runs per call.
 */
export function serverSpanAttributes(
  system: string,
  method: string,
  serverAddress: string | undefined,
  serverPort: number | undefined,
  peerAddress: string,
  peerPort: number,
): Record<string, string | number | undefined> {
  return {
    "rpc.system.name": system,
    "rpc.method": method,
    "server.address": serverAddress,
    "server.port": serverPort,
    "network.peer.address": peerAddress,
    "network.peer.port": peerPort,
  };
}

/** `rpc.system.name` values. */
const RPC_SYSTEM_GRPC = "grpc";
const RPC_SYSTEM_DUBBO = "dubbo";
const RPC_SYSTEM_CONNECT = "connectrpc";

/** Call duration histograms, in seconds (the current conventions). */
export const METRIC_SERVER_CALL_DURATION = "rpc.server.call.duration";
export const METRIC_CLIENT_CALL_DURATION = "rpc.client.call.duration";
/** Per-message sizes, in bytes: the names older conventions used (deprecated there, kept as the issue asks). */
export const METRIC_SERVER_REQUEST_SIZE = "rpc.server.request.size";
export const METRIC_SERVER_RESPONSE_SIZE = "rpc.server.response.size";
/** Calls in progress (an UpDownCounter): not in any convention. */
export const METRIC_SERVER_ACTIVE_CALLS = "rpc.server.active_calls";

/** The conventions' advised buckets for the call duration histograms, seconds. */
export const DURATION_BUCKETS: readonly number[] = [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10];

/**
 * The `rpc.system.name` of a server call's protocol (`CallContext.protocol`): `grpc` for gRPC,
 * `dubbo` for Triple HTTP and Triple over WebSocket, `connectrpc` for Connect; any other protocol name as it is.
 */
export function rpcSystemOf(protocol: string): string {
  switch (protocol) {
    case "grpc":
    case "grpc-web":
      return RPC_SYSTEM_GRPC;
    case "triple":
    case "triple-websocket":
      return RPC_SYSTEM_DUBBO;
    case "connect":
      return RPC_SYSTEM_CONNECT;
    default:
      return protocol;
  }
}

const UPPER: readonly string[] = Array.from({ length: 17 }, (_, c) => codeName(c as Code).toUpperCase());
const LOWER: readonly string[] = Array.from({ length: 17 }, (_, c) => codeName(c as Code));

/** `rpc.status_code`: gRPC's upper-case names (gRPC, Dubbo), Connect's lower-case ones. */
export function statusCodeName(system: string, code: Code): string {
  return (system === RPC_SYSTEM_CONNECT ? LOWER : UPPER)[code] ?? String(code);
}

/** The codes a server span reports as errors; every other code is the caller's problem. */
const SERVER_ERRORS: ReadonlySet<Code> = new Set([Code.Unknown, Code.DeadlineExceeded, Code.Unimplemented, Code.Internal, Code.Unavailable, Code.DataLoss]);

/** True when a server call ending with `code` is an error (span status ERROR, `error.type`). */
export function isServerError(code: Code): boolean {
  return SERVER_ERRORS.has(code);
}
