// Owns `codeFromGrpcHttpStatus`: the code a gRPC, gRPC-Web or Connect client infers from an HTTP
// status alone (status-table.ts holds Triple's). A module of its own so that a page of the web
// client, which loads status-table.ts, loads this only with Connect or gRPC-Web. Must not change:
// gRPC's http-grpc-status-mapping that grpc-js and other peers rely on.
import { Code } from "./code.js";

/** The code a gRPC client infers from a non-200 `:status` (gRPC's http-grpc-status-mapping, which differs from table 7.2: 400 is internal there). */
export function codeFromGrpcHttpStatus(status: number): Code {
  switch (status) {
    case 400:
      return Code.Internal;
    case 401:
      return Code.Unauthenticated;
    case 403:
      return Code.PermissionDenied;
    case 404:
      return Code.Unimplemented;
    case 429:
    case 502:
    case 503:
    case 504:
      return Code.Unavailable;
    default:
      return Code.Unknown;
  }
}
