import * as protobuf from "protobufjs";

/** The full name of the error detail the greet sample sends. */
export const ERROR_INFO_TYPE = "google.rpc.ErrorInfo";

/** google.rpc.ErrorInfo (google/rpc/error_details.proto): why an error happened, machine-readable. */
export interface ErrorInfo {
  reason: string;
  domain: string;
  metadata: Record<string, string>;
}

/** google.rpc.ErrorInfo as protobufjs JSON: `reason = 1`, `domain = 2`, `map<string, string> metadata = 3`. */
export const ERROR_INFO_JSON = {
  nested: {
    google: {
      nested: {
        rpc: {
          nested: {
            ErrorInfo: {
              fields: {
                reason: { type: "string", id: 1 },
                domain: { type: "string", id: 2 },
                metadata: { keyType: "string", type: "string", id: 3 },
              },
            },
          },
        },
      },
    },
  },
};

const ErrorInfoType = protobuf.Root.fromJSON(ERROR_INFO_JSON).lookupType(ERROR_INFO_TYPE);

/** Encodes a google.rpc.ErrorInfo. */
export function encodeErrorInfo(info: ErrorInfo): Uint8Array {
  return ErrorInfoType.encode(ErrorInfoType.fromObject(info)).finish();
}

/** Decodes a google.rpc.ErrorInfo. */
export function decodeErrorInfo(bytes: Uint8Array): ErrorInfo {
  const o = ErrorInfoType.toObject(ErrorInfoType.decode(bytes), { defaults: true }) as ErrorInfo;
  return { reason: o.reason, domain: o.domain, metadata: { ...o.metadata } };
}
