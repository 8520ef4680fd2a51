// Owns `METADATA_SERVICE_V2`, `METADATA_SERVICE_V2_PROTO`, `metadataProtoRoot`, `toMetadataInfoV2`.
// The service Dubbo 3.3 consumers ask an instance for its metadata. Must not change: the ZooKeeper
// paths, URL encodings and metadata Apache Dubbo reads and writes.
import * as protobuf from "protobufjs";
import type { MetadataInfo } from "./instance.js";

/** The service Dubbo 3.3 consumers ask an instance for its metadata. */
export const METADATA_SERVICE_V2 = "org.apache.dubbo.metadata.MetadataServiceV2";

/**
 * Dubbo 3.3's `metadata_service_v2.proto` (dubbo-metadata-api, also dubbo-go's
 * `metadata/triple_api/proto`): the same package, service, messages and field numbers.
 */
export const METADATA_SERVICE_V2_PROTO = `
syntax = "proto3";
package org.apache.dubbo.metadata;

service MetadataServiceV2 {
  rpc GetMetadataInfo(MetadataRequest) returns (MetadataInfoV2);
}

message MetadataRequest {
  string revision = 1;
}

message MetadataInfoV2 {
  string app = 1;
  string version = 2;
  map<string, ServiceInfoV2> services = 3;
}

message ServiceInfoV2 {
  string name = 1;
  string group = 2;
  string version = 3;
  string protocol = 4;
  int32 port = 5;
  string path = 6;
  map<string, string> params = 7;
}
`;

let root: protobuf.Root | undefined;

/** The parsed .proto (field names as written), built on first use. */
export function metadataProtoRoot(): protobuf.Root {
  if (!root) {
    root = protobuf.parse(METADATA_SERVICE_V2_PROTO, { keepCase: true }).root;
    root.resolveAll();
  }
  return root;
}

/** A `MetadataInfoV2` message (plain object) for the metadata. `version` is the revision, as Dubbo answers. */
export function toMetadataInfoV2(info: MetadataInfo): Record<string, unknown> {
  const services: Record<string, unknown> = {};
  for (const [k, s] of Object.entries(info.services)) {
    services[k] = { name: s.name, group: s.group, version: s.version, protocol: s.protocol, port: s.port, path: s.path, params: { ...s.params } };
  }
  return { app: info.app, version: info.revision, services };
}
