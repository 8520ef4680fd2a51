// Owns `createMetadataService`. A MetadataServiceV2 implementation (an instance of an `@Service`
// class bound to the .proto). Must not change: the ZooKeeper paths, URL encodings and metadata
// Apache Dubbo reads and writes.
import { Service } from "../service/decorators.js";
import type { MetadataInfo } from "./instance.js";
import { METADATA_SERVICE_V2, metadataProtoRoot, toMetadataInfoV2 } from "./metadata-proto.js";

/** How many past revisions a provider still answers for (consumers may ask for one just replaced). */
const KEPT_REVISIONS = 4;

/**
 * The provider's MetadataServiceV2 (`org.apache.dubbo.metadata.MetadataServiceV2/GetMetadataInfo`),
 * served on the server's own port over Triple/gRPC with protobuf, as Dubbo 3.3 and dubbo-go
 * consumers call it: it answers the metadata of the revision asked for (the current one, or one
 * of the last few), an empty `MetadataInfoV2` for an unknown revision (as Dubbo does), and the
 * current metadata when no revision is given.
 */
export interface MetadataServiceV2 {
  /** Publishes the current metadata. */
  update(info: MetadataInfo): void;
}

/** A MetadataServiceV2 implementation (an instance of an `@Service` class bound to the .proto). */
export function createMetadataService(): MetadataServiceV2 & object {
  const revisions = new Map<string, MetadataInfo>();
  let current: MetadataInfo | undefined;

  @Service(METADATA_SERVICE_V2, { proto: metadataProtoRoot() })
  class MetadataServiceV2Impl {
    update(info: MetadataInfo): void {
      current = info;
      revisions.delete(info.revision);
      revisions.set(info.revision, info);
      while (revisions.size > KEPT_REVISIONS) revisions.delete(revisions.keys().next().value as string);
    }

    async GetMetadataInfo(req: { revision?: string }): Promise<Record<string, unknown>> {
      const info = req.revision ? revisions.get(req.revision) : current;
      return info ? toMetadataInfoV2(info) : {};
    }
  }
  return new MetadataServiceV2Impl();
}
