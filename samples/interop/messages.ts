/**
 * TypeScript shapes of the grpc.testing messages the interop service reads and writes, as
 * protobufjs decodes them (snake_case field names, `keepCase`; absent sub-messages are null).
 */

/** grpc.testing.BoolValue: a "nullable" bool. */
export interface BoolValue {
  value: boolean;
}

/** grpc.testing.Payload. */
export interface Payload {
  type?: number;
  body?: Uint8Array;
}

/** grpc.testing.EchoStatus: the status a client asks the server to end the call with. */
export interface EchoStatus {
  code: number;
  message: string;
}

/** grpc.testing.SimpleRequest. */
export interface SimpleRequest {
  response_type?: number;
  response_size?: number;
  payload?: Payload | null;
  fill_username?: boolean;
  fill_oauth_scope?: boolean;
  response_compressed?: BoolValue | null;
  response_status?: EchoStatus | null;
  expect_compressed?: BoolValue | null;
  fill_server_id?: boolean;
  fill_grpclb_route_type?: boolean;
}

/** grpc.testing.SimpleResponse. */
export interface SimpleResponse {
  payload?: Payload;
  username?: string;
  oauth_scope?: string;
  server_id?: string;
  grpclb_route_type?: number;
  hostname?: string;
}

/** grpc.testing.StreamingInputCallRequest. */
export interface StreamingInputCallRequest {
  payload?: Payload | null;
  expect_compressed?: BoolValue | null;
}

/** grpc.testing.StreamingInputCallResponse. */
export interface StreamingInputCallResponse {
  aggregated_payload_size: number;
}

/** grpc.testing.ResponseParameters: one response the client wants. */
export interface ResponseParameters {
  size?: number;
  interval_us?: number;
  compressed?: BoolValue | null;
}

/** grpc.testing.StreamingOutputCallRequest. */
export interface StreamingOutputCallRequest {
  response_type?: number;
  response_parameters?: ResponseParameters[];
  payload?: Payload | null;
  response_status?: EchoStatus | null;
}

/** grpc.testing.StreamingOutputCallResponse. */
export interface StreamingOutputCallResponse {
  payload: Payload;
}

/** grpc.testing.Empty. */
export type Empty = Record<string, never>;
