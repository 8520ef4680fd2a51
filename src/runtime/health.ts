// Owns `HEALTH_SERVICE_NAME`, `ServingStatus`, `HEALTH_PROTO_JSON`, `HealthService`. The
// fully-qualified name of the gRPC health service. Must not change: the rules every protocol relies
// on (docs/architecture.md).
import * as protobuf from "protobufjs";
import { Code } from "../protocol/code.js";
import { nameFile } from "../schema/descriptor.js";
import { RpcError } from "../protocol/rpc-error.js";
import { Ctx, Method, Service } from "../service/decorators.js";
import type { CallContext } from "./context.js";
import type { Router } from "./router.js";

/** The fully-qualified name of the gRPC health service. */
export const HEALTH_SERVICE_NAME = "grpc.health.v1.Health";

/** grpc.health.v1.HealthCheckResponse.ServingStatus. */
export enum ServingStatus {
  /** @public */
  UNKNOWN = 0,
  SERVING = 1,
  NOT_SERVING = 2,
  /** Watch only: the service is not known (yet). */
  SERVICE_UNKNOWN = 3,
}

/**
 * grpc/health/v1/health.proto (Check and Watch) as a protobufjs JSON descriptor, so the
 * built-in service needs no file on disk. Tests and clients can load it with
 * `protobuf.Root.fromJSON` or `@grpc/proto-loader`'s `fromJSON`.
 */
export const HEALTH_PROTO_JSON: protobuf.INamespace = {
  nested: {
    grpc: {
      nested: {
        health: {
          nested: {
            v1: {
              nested: {
                HealthCheckRequest: { fields: { service: { type: "string", id: 1 } } },
                HealthCheckResponse: {
                  fields: { status: { type: "ServingStatus", id: 1 } },
                  nested: {
                    ServingStatus: { values: { UNKNOWN: 0, SERVING: 1, NOT_SERVING: 2, SERVICE_UNKNOWN: 3 } },
                  },
                },
                Health: {
                  methods: {
                    Check: { requestType: "HealthCheckRequest", responseType: "HealthCheckResponse" },
                    Watch: {
                      requestType: "HealthCheckRequest",
                      responseType: "HealthCheckResponse",
                      responseStream: true,
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

const healthRoot = protobuf.Root.fromJSON(HEALTH_PROTO_JSON);
healthRoot.resolveAll();
nameFile(healthRoot, "grpc/health/v1/health.proto");

/** What the health service reads from its server. */
export interface HealthSource {
  readonly router: Router;
  /** True once `close()` began (before the listener stops accepting, with `drainDelayMs`). */
  readonly shuttingDown: boolean;
}

interface HealthRequest {
  service?: string;
}

/**
 * The built-in `grpc.health.v1.Health`: every registered service, and the server as a whole
 * (`""`), is SERVING until shutdown starts, then NOT_SERVING. `setStatus` overrides one service
 * (a dependency went down, say). Check of an unknown service is NOT_FOUND, as grpc does; Watch
 * of one reports SERVICE_UNKNOWN and keeps watching.
 */
@Service(HEALTH_SERVICE_NAME, { proto: healthRoot })
export class HealthService {
  private readonly overrides = new Map<string, ServingStatus>();
  private readonly watchers = new Set<() => void>();

  constructor(private readonly source: HealthSource) {}

  /** The current status of `service` ("" for the server); undefined when the service is unknown. */
  statusOf(service: string): ServingStatus | undefined {
    const known = service === "" || this.source.router.hasService(service) || this.overrides.has(service);
    if (!known) return undefined;
    if (this.source.shuttingDown) return ServingStatus.NOT_SERVING;
    return this.overrides.get(service) ?? ServingStatus.SERVING;
  }

  /** Overrides the status of one service (or "" for the server); `undefined` removes the override. */
  setStatus(service: string, status: ServingStatus | undefined): void {
    if (status === undefined) this.overrides.delete(service);
    else this.overrides.set(service, status);
    this.notify();
  }

  /** Called when shutdown starts: every watcher hears NOT_SERVING. */
  shutdown(): void {
    this.notify();
  }

  private notify(): void {
    const ws = [...this.watchers];
    this.watchers.clear();
    for (const w of ws) w();
  }

  @Method("Check")
  check(req: HealthRequest): { status: ServingStatus } {
    const name = req.service ?? "";
    const status = this.statusOf(name);
    if (status === undefined) throw new RpcError(Code.NotFound, `unknown service ${name}`);
    return { status };
  }

  @Method("Watch")
  async *watch(req: HealthRequest, @Ctx() ctx: CallContext): AsyncGenerator<{ status: ServingStatus }> {
    const name = req.service ?? "";
    let last: ServingStatus | undefined;
    for (;;) {
      const status = this.statusOf(name) ?? ServingStatus.SERVICE_UNKNOWN;
      if (status !== last) {
        last = status;
        yield { status };
      }
      // Shutdown is final: end the stream so graceful close need not wait for watchers.
      if (this.source.shuttingDown || ctx.aborted) return;
      await new Promise<void>((resolve) => {
        this.watchers.add(resolve);
        ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
    }
  }
}
