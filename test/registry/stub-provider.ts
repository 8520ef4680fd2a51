import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { toProto } from "../../src/index.js";
import { METADATA_SERVICE_V2_PROTO } from "../../src/registry/metadata-proto.js";
import { EchoService } from "./services.js";

/**
 * Loads .proto text the way grpc-js's loader wants it (from a file): written into a temp
 * directory, loaded synchronously, and the directory removed at once.
 */
function loadProto(prefix: string, text: string, opts: protoLoader.Options): protoLoader.PackageDefinition {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  try {
    const file = path.join(dir, "service.proto");
    fs.writeFileSync(file, text);
    return protoLoader.loadSync(file, opts);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** A service of the stub's metadata, as `ServiceInfoV2`. */
export interface StubServiceInfo {
  name: string;
  group: string;
  version: string;
  protocol: string;
  port: number;
  path: string;
  params: Record<string, string>;
}

/**
 * A provider that is not triple-rpc: a plain `@grpc/grpc-js` server built from Dubbo's
 * `metadata_service_v2.proto` and from the EchoService's .proto. It never registers itself (the
 * tests write its instance node with kazoo, as Java or dubbo-go would), answers GetMetadataInfo
 * for `revision` with `services`, and answers `whoami` with `id`.
 */
export class StubProvider {
  /** GetMetadataInfo requests received: revision and the tri-service-version/group headers. */
  readonly metadataCalls: { revision: string; version: string; group: string }[] = [];
  calls = 0;

  private constructor(
    private readonly server: grpc.Server,
    readonly port: number,
  ) {}

  /** `failMetadata`: how many GetMetadataInfo calls fail (UNAVAILABLE) before it answers; `answer`: what its answers name. */
  static async start(o: {
    id: string;
    app: string;
    revision: string;
    services: (port: number) => Record<string, StubServiceInfo>;
    failMetadata?: number;
    /** The application and revision its answers name (default `app` and `revision`): a lying instance. */
    answer?: { app?: string; version?: string };
  }): Promise<StubProvider> {
    const opts = { keepCase: true, longs: Number, defaults: true };
    const md = grpc.loadPackageDefinition(loadProto("triple-rpc-stub-", METADATA_SERVICE_V2_PROTO, opts)) as any;
    const echo = grpc.loadPackageDefinition(loadProto("triple-rpc-stub-", toProto(EchoService), opts)) as any;
    const server = new grpc.Server();
    let stub: StubProvider | undefined;
    server.addService(md.org.apache.dubbo.metadata.MetadataServiceV2.service, {
      GetMetadataInfo: (call: grpc.ServerUnaryCall<{ revision: string }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
        const first = (k: string) => String(call.metadata.get(k)[0] ?? "");
        stub?.metadataCalls.push({ revision: call.request.revision, version: first("tri-service-version"), group: first("tri-service-group") });
        if ((stub?.metadataCalls.length ?? 0) <= (o.failMetadata ?? 0)) return cb({ code: grpc.status.UNAVAILABLE, details: "not ready yet" });
        if (call.request.revision !== o.revision) return cb(null, {});
        cb(null, { app: o.answer?.app ?? o.app, version: o.answer?.version ?? o.revision, services: o.services(stub!.port) });
      },
    });
    const answer = (value: unknown) => (_call: unknown, cb: grpc.sendUnaryData<unknown>) => {
      if (stub) stub.calls += 1;
      cb(null, { value: { stringValue: value } });
    };
    server.addService(echo.org.example.registry.EchoService.service, {
      whoami: answer(o.id),
      SayHello: answer(`hello from ${o.id}`),
      fail: (_c: unknown, cb: grpc.sendUnaryData<unknown>) => cb({ code: grpc.status.INTERNAL, details: "stub fails" }),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    stub = new StubProvider(server, port);
    return stub;
  }

  close(): Promise<void> {
    return new Promise((r) => this.server.tryShutdown(() => r()));
  }
}

/**
 * The instance JSON Dubbo 3.3 Java writes (Curator's ServiceInstance through Jackson, as in
 * Dubbo's docs), for an instance at `port` whose MetadataServiceV2 answers on the same port.
 */
export function javaInstanceJson(app: string, port: number, revision: string): string {
  const id = `127.0.0.1:${port}`;
  return JSON.stringify({
    name: app,
    id,
    address: "127.0.0.1",
    port,
    sslPort: null,
    payload: {
      "@class": "org.apache.dubbo.registry.zookeeper.ZookeeperInstance",
      id,
      name: app,
      metadata: {
        "dubbo.endpoints": JSON.stringify([{ port, protocol: "tri" }]),
        "dubbo.metadata-service.url-params": JSON.stringify({
          connections: "1",
          version: "1.0.0",
          dubbo: "2.0.2",
          release: "3.3.1",
          side: "provider",
          port: String(port),
          protocol: "tri",
        }),
        "dubbo.metadata.revision": revision,
        "dubbo.metadata.storage-type": "local",
        "meta-v": "2.0.0",
        timestamp: String(Date.now()),
      },
    },
    registrationTimeUTC: Date.now(),
    serviceType: "DYNAMIC",
    uriSpec: null,
  });
}

/**
 * The instance JSON dubbo-go writes (`registry/zookeeper/service_discovery.go` toCuratorInstance:
 * Go's encoding/json, `omitempty` fields left out, map keys sorted, no sslPort/serviceType/uriSpec).
 */
export function goInstanceJson(app: string, port: number, revision: string): string {
  const id = `127.0.0.1:${port}`;
  return JSON.stringify({
    name: app,
    id,
    address: "127.0.0.1",
    port,
    payload: {
      "@class": "org.apache.dubbo.registry.zookeeper.ZookeeperInstance",
      id,
      metadata: {
        "dubbo.endpoints": JSON.stringify([{ port, protocol: "tri" }]),
        "dubbo.metadata-service.url-params": JSON.stringify({ port: String(port), protocol: "tri" }),
        "dubbo.metadata.revision": revision,
        "dubbo.metadata.storage-type": "local",
        "meta-v": "2.0.0",
      },
      name: app,
    },
  });
}

/** ServiceInfoV2 entries for the EchoService on `port` (a Java provider's metadata shape). */
export function echoServiceInfo(iface: string, port: number, extra: Record<string, string> = {}): Record<string, StubServiceInfo> {
  return {
    [`${iface}:tri`]: {
      name: iface,
      group: "",
      version: "",
      protocol: "tri",
      port,
      path: iface,
      params: { application: "stub", interface: iface, methods: "fail,sayHello,whoami", side: "provider", release: "3.3.1", ...extra },
    },
  };
}

/** A grpc-js client of MetadataServiceV2 built from Dubbo's .proto (not our code). */
export function metadataClient(port: number): { get(revision: string, headers?: Record<string, string>): Promise<any>; close(): void } {
  const def = grpc.loadPackageDefinition(loadProto("triple-rpc-msv2-", METADATA_SERVICE_V2_PROTO, { keepCase: true, longs: Number, defaults: true })) as any;
  const c = new def.org.apache.dubbo.metadata.MetadataServiceV2(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  return {
    get(revision, headers = {}) {
      const md = new grpc.Metadata();
      for (const [k, v] of Object.entries(headers)) md.set(k, v);
      return new Promise((resolve, reject) => c.GetMetadataInfo({ revision }, md, (e: Error | null, v: unknown) => (e ? reject(e) : resolve(v))));
    },
    close: () => c.close(),
  };
}
