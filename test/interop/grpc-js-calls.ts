import * as grpc from "@grpc/grpc-js";
import type { Client } from "./grpc-js-clients.js";

/** What a finished call reports: its responses, initial metadata and final status. */
export interface Outcome<T> {
  responses: T[];
  metadata: grpc.Metadata | undefined;
  status: grpc.StatusObject;
}

/** An error from a grpc-js call, with its code and details. */
export type CallError = grpc.ServiceError;

/** A unary call; resolves with the response or rejects with the grpc-js ServiceError. */
export function unary<T = any>(
  client: Client,
  method: string,
  request: object,
  metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<Outcome<T>> {
  return new Promise((resolve, reject) => {
    let md: grpc.Metadata | undefined;
    let response: T | undefined;
    let error: grpc.ServiceError | null = null;
    const call = client[method](request, metadata, options, (e: grpc.ServiceError | null, r: T) => {
      error = e;
      response = r;
    });
    call.on("metadata", (m: grpc.Metadata) => (md = m));
    call.on("status", (status: grpc.StatusObject) => {
      // 'status' comes after the callback, so both the response and the trailers are known here.
      if (error) reject(error);
      else resolve({ responses: response === undefined ? [] : [response], metadata: md, status });
    });
  });
}

/**
 * A streaming call driven by `drive` (which writes and ends the request side). Collects every
 * response; resolves on status OK, rejects with the ServiceError otherwise.
 */
export function stream<T = any>(
  call: grpc.ClientDuplexStream<any, T> | grpc.ClientReadableStream<T>,
  onResponse?: (r: T, index: number) => void,
): Promise<Outcome<T>> {
  return new Promise((resolve, reject) => {
    const responses: T[] = [];
    let md: grpc.Metadata | undefined;
    let error: grpc.ServiceError | undefined;
    call.on("metadata", (m: grpc.Metadata) => (md = m));
    call.on("data", (r: T) => {
      responses.push(r);
      onResponse?.(r, responses.length - 1);
    });
    call.on("error", (e: grpc.ServiceError) => (error = e));
    call.on("status", (status: grpc.StatusObject) => {
      if (status.code === grpc.status.OK) resolve({ responses, metadata: md, status });
      else reject(error ?? Object.assign(new Error(status.details), status));
    });
  });
}

/** A client-streaming call: writes `requests`, half-closes, resolves with the one response. */
export function clientStream<T = any>(
  client: Client,
  method: string,
  requests: object[],
  metadata = new grpc.Metadata(),
  options: grpc.CallOptions = {},
): Promise<Outcome<T>> {
  return new Promise((resolve, reject) => {
    let md: grpc.Metadata | undefined;
    let response: T | undefined;
    let error: grpc.ServiceError | null = null;
    const call = client[method](metadata, options, (e: grpc.ServiceError | null, r: T) => {
      error = e;
      response = r;
    });
    call.on("metadata", (m: grpc.Metadata) => (md = m));
    call.on("status", (status: grpc.StatusObject) => {
      if (error) reject(error);
      else resolve({ responses: response === undefined ? [] : [response], metadata: md, status });
    });
    for (const r of requests) call.write(r);
    call.end();
  });
}

/** Expects `p` to reject with gRPC status `code`; returns the error. */
export async function rejectsWith(p: Promise<unknown>, code: grpc.status): Promise<CallError> {
  try {
    await p;
  } catch (e) {
    const err = e as CallError;
    if (err.code !== code) {
      throw new Error(`expected status ${grpc.status[code]} (${code}), got ${err.code}: ${err.details ?? err.message}`);
    }
    return err;
  }
  throw new Error(`expected status ${grpc.status[code]} (${code}), but the call succeeded`);
}
