import { createFileRegistry, type DescMessage, type DescService, type FileRegistry, fromBinary } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import * as protobuf from "protobufjs";
import { ERROR_INFO_JSON, ERROR_INFO_TYPE } from "../../samples/greet/error-info.js";
import { GREET_PROTO } from "../../samples/greet/greet-service.js";
import { descriptorSetBytes } from "../interop/connect-descriptors.js";

/** The greet sample for connect-es clients: greet.proto plus google.rpc.ErrorInfo, as descriptors. */
export interface GreetDescriptors {
  /** A FileDescriptorSet (greet.proto and google/rpc/error_details.proto), for a browser bundle. */
  readonly setBytes: Uint8Array;
  readonly registry: FileRegistry;
  readonly service: DescService;
  readonly errorInfo: DescMessage;
}

/** Builds the greet sample's descriptors with protobufjs (no protoc). */
export function greetDescriptors(): GreetDescriptors {
  const greet = new protobuf.Root();
  greet.loadSync(GREET_PROTO, { keepCase: true });
  const info = protobuf.Root.fromJSON(ERROR_INFO_JSON);
  const a = fromBinary(FileDescriptorSetSchema, descriptorSetBytes(greet, "greet.proto"));
  const b = fromBinary(FileDescriptorSetSchema, descriptorSetBytes(info, "google/rpc/error_details.proto"));
  const both = { ...a, file: [...b.file, ...a.file] };
  const registry = createFileRegistry(both);
  const service = registry.getService("greet.GreetService");
  const errorInfo = registry.getMessage(ERROR_INFO_TYPE);
  if (!service || !errorInfo) throw new Error("greet.GreetService or google.rpc.ErrorInfo missing from the descriptor set");
  // Bytes of the merged set, for the browser page.
  const setBytes = Buffer.concat([descriptorSetBytes(info, "google/rpc/error_details.proto"), descriptorSetBytes(greet, "greet.proto")]);
  return { setBytes, registry, service, errorInfo };
}
