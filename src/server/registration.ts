import type { AddressInfo } from "node:net";
import { resolveRegistry, type RegistrySpec } from "../registry/create.js";
import type { Registry } from "../registry/registry.js";
import { announcedHost, isAnyHost, providerUrl } from "../registry/service-url.js";
import type { DubboUrl } from "../registry/url.js";
import type { ServiceDescriptor } from "../service/descriptors.js";
import { isValidWeight } from "../client/provider.js";
import type { Logger } from "../observability/logger.js";

/** How a server announces itself in a registry. */
export interface ProviderRegistrationOptions {
  readonly registry: RegistrySpec;
  /** `application=` of the provider URLs. */
  readonly application: string | undefined;
  /** The host to announce instead of the one chosen from the bound address. */
  readonly host: string | undefined;
  /** `weight=` of the provider URLs. */
  readonly weight: number | undefined;
  /** How long to wait between removing the nodes and draining, ms. */
  readonly unregisterDelayMs: number;
  /** The server's logger. */
  readonly logger: Logger;
}

/**
 * A server's provider nodes: one per exported service (interface × version × group), written
 * once the server listens and removed first thing on close, so consumers stop sending new calls
 * before the server refuses them.
 */
export class ProviderRegistration {
  readonly registry: Registry;
  private readonly owned: boolean;
  private urls: DubboUrl[] = [];

  constructor(private readonly o: ProviderRegistrationOptions) {
    const r = resolveRegistry(o.registry, "createServer", o.logger);
    this.registry = r.registry;
    this.owned = r.owned;
    if (o.weight !== undefined && !isValidWeight(o.weight)) {
      throw new TypeError(`createServer: registryWeight must be a number >= 0, got ${o.weight}`);
    }
  }

  /** Registers `services` at the bound address. */
  async register(services: readonly ServiceDescriptor[], bound: AddressInfo): Promise<void> {
    const host = announcedHost(bound.address, this.o.host);
    this.urls = services.map((s) =>
      providerUrl({
        interface: s.name,
        version: s.version,
        group: s.group,
        methods: s.methods,
        host,
        port: bound.port,
        application: this.o.application ?? "triple-rpc",
        anyhost: isAnyHost(bound.address),
        weight: this.o.weight,
      }),
    );
    await Promise.all(this.urls.map((u) => this.registry.register(u)));
  }

  /** Removes the provider nodes, then waits `unregisterDelayMs` for consumers to notice. */
  async unregister(): Promise<void> {
    const urls = this.urls;
    this.urls = [];
    await Promise.all(urls.map((u) => this.registry.unregister(u).catch(() => {})));
    if (urls.length > 0 && this.o.unregisterDelayMs > 0) await new Promise((r) => setTimeout(r, this.o.unregisterDelayMs));
  }

  /** Closes the registry if the server made it. */
  async close(): Promise<void> {
    if (this.owned) await this.registry.close().catch(() => {});
  }
}
