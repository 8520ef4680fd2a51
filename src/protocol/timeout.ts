import { Code } from "./code.js";
import { RpcError } from "./rpc-error.js";

function badTimeout(header: string, value: string): RpcError {
  return new RpcError(Code.InvalidArgument, `invalid ${header} value: "${value}"`, { legacyStatus: 40 });
}

/** Parses `tri-service-timeout` (integer milliseconds, at most 10 digits). Undefined when absent. */
export function parseTriTimeout(header: string, value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  if (!/^\d{1,10}$/.test(value)) throw badTimeout(header, value);
  return Number(value);
}

const grpcUnits: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** Parses `grpc-timeout` (at most 8 digits and a unit H M S m u n) into milliseconds. */
export function parseGrpcTimeout(value: string | undefined): number | undefined {
  if (value === undefined || value === "") return undefined;
  const m = /^(\d{1,8})([HMSmun])$/.exec(value);
  if (!m) throw badTimeout("grpc-timeout", value);
  return Number(m[1]) * grpcUnits[m[2]];
}

/** Formats milliseconds as a `grpc-timeout` value in the finest unit that fits 8 digits. */
export function formatGrpcTimeout(ms: number): string {
  if (ms <= 0) return "1n";
  if (ms < 1e5) return `${Math.ceil(ms * 1000)}u`;
  if (ms < 1e8) return `${Math.ceil(ms)}m`;
  if (ms < 1e11) return `${Math.ceil(ms / 1000)}S`;
  return `${Math.min(99_999_999, Math.ceil(ms / 60_000))}M`;
}
