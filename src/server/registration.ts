// Owns `ProviderRegistration`. A server's provider nodes: one per exported service (interface ×
// version × group), written once the server listens and removed first thing on close, so consumers
// stop … Must not change: limits before reading, authorization before decoding (docs/security.md).
import type { AddressInfo } from "node:net";
import { resolveRegistry } from "../registry/create.js";
import { hasInstanceDiscovery, type Registry, registryLog } from "../registry/registry.js";
import { instanceJson, metadataInfo, metadataJson } from "../registry/instance.js";
import { createMetadataService, type MetadataServiceV2 } from "../registry/metadata-service.js";
import { announcedHost, isAnyHost, providerUrl } from "../registry/service-url.js";
import { type DubboUrl, toFullString } from "../registry/url.js";
import { resolveConfigCenter } from "../governance/config-center.js";
import { ProviderGovernance } from "../governance/provider-governance.js";
import type { ServiceDescriptor } from "../service/descriptors.js";
import type { Logger } from "../runtime/logger.js";
import type { RegistryLevel } from "../registry/options.js";
import type { ServerRegistryOptions } from "./server-options.js";

/** How a server announces itself in a registry: createServer's checked `registry` group, and its logger. */
export type ProviderRegistrationOptions = ServerRegistryOptions & {
  readonly level: RegistryLevel;
  readonly unregisterDelayMs: number;
  /** The server's logger. */
  readonly logger: Logger;
};

/**
 * A server's provider nodes: one per exported service (interface × version × group), written
 * once the server listens and removed first thing on close, so consumers stop sending new calls
 * before the server refuses them.
 */
export class ProviderRegistration {
  readonly registry: Registry;
  private readonly owned: boolean;
  private urls: DubboUrl[] = [];
  /** What is announced where, once `register` ran. */
  private announced: { host: string; port: number; services: ServiceDescriptor[]; anyhost: boolean } | undefined;
  private instance: { app: string; id: string } | undefined;
  private readonly mode: RegistryLevel;
  /** The MetadataServiceV2 the server serves, when announcing at instance level. */
  readonly metadataService: (MetadataServiceV2 & object) | undefined;
  /** Configurators addressed to this provider (Dubbo Admin's weight, disable, timeout), when a config center is read. */
  private governance: ProviderGovernance | undefined;
  /** Each URL as built → as registered now (configured; absent while a rule disables it). */
  private readonly exported = new Map<DubboUrl, DubboUrl>();
  /** The configured URLs the instance's metadata was last published with. */
  private published = "";

  constructor(private readonly o: ProviderRegistrationOptions) {
    const r = resolveRegistry(o.address, "createServer", o.logger);
    this.registry = r.registry;
    this.owned = r.owned;
    this.mode = o.level;
    if (this.mode !== "interface" && !hasInstanceDiscovery(this.registry)) {
      if (this.mode === "application")
        throw new TypeError(`createServer: registry.level "application" needs a registry with application-level discovery (ZooKeeper)`);
      this.mode = "interface";
    }
    this.metadataService = this.mode === "interface" ? undefined : createMetadataService();
    const center = resolveConfigCenter(o.configCenter, this.registry, "createServer", o.logger);
    if (center) {
      this.governance = new ProviderGovernance({
        ...center,
        application: this.application,
        logger: o.logger,
        onChange: () => void this.reExport().catch(() => {}),
      });
    }
  }

  /** The URLs consumers are to see: each configured by the rules addressed to this provider, the disabled ones left out. */
  private effective(): DubboUrl[] {
    const out: DubboUrl[] = [];
    for (const u of this.urls) {
      const c = this.governance ? this.governance.configure(u) : u;
      if (c) out.push(c);
    }
    return out;
  }

  /** Writes `url`'s configured form at interface level (nothing while disabled), replacing what was there. */
  private async exportUrl(url: DubboUrl): Promise<void> {
    this.governance?.follow(url);
    const next = this.governance ? this.governance.configure(url) : url;
    const prev = this.exported.get(url);
    if (prev && next && toFullString(prev) === toFullString(next)) return;
    if (prev) {
      this.exported.delete(url);
      if (this.mode !== "application") await this.registry.unregister(prev).catch(() => {});
    }
    if (!next) return;
    this.exported.set(url, next);
    if (this.mode !== "application") await this.registry.register(next);
  }

  /**
   * A configurator addressed to this provider changed: every URL is configured again and, where
   * it changed, unregistered and registered anew (Java's `RegistryProtocol.reExport`); at
   * application level a new metadata revision is published (the instance node goes while
   * every service is disabled).
   */
  private async reExport(): Promise<void> {
    if (!this.announced) return;
    await Promise.all(this.urls.map((u) => this.exportUrl(u)));
    // A rule that changes nothing here (another side's, another provider's) publishes nothing.
    const now = this.effective().map(toFullString).join("\n");
    if (this.mode !== "interface" && now !== this.published) await this.publishInstance();
  }

  /** The application name announced. */
  get application(): string {
    return this.o.application ?? "triple-rpc";
  }

  /** Registers `services` at the bound address. */
  async register(services: readonly ServiceDescriptor[], bound: AddressInfo): Promise<void> {
    const host = announcedHost(bound.address, this.o.host);
    this.announced = { host, port: bound.port, services: [...services], anyhost: isAnyHost(bound.address) };
    this.urls = services.map((s) => this.urlOf(s));
    const writes: Promise<void>[] = this.urls.map((u) => this.exportUrl(u));
    if (this.mode !== "interface") writes.push(this.publishInstance());
    await Promise.all(writes);
  }

  /**
   * A service registered after `listen()`: announced at interface level, and a new revision of
   * the application's metadata published (MetadataServiceV2, report, instance node).
   */
  async add(service: ServiceDescriptor): Promise<void> {
    const a = this.announced;
    if (!a) return;
    a.services.push(service);
    const url = this.urlOf(service);
    this.urls.push(url);
    const writes: Promise<void>[] = [this.exportUrl(url)];
    if (this.mode !== "interface") writes.push(this.publishInstance());
    await Promise.all(writes);
  }

  /** A service no longer offered: its interface-level node goes and a new revision is published. */
  async remove(name: string, version = "", group = ""): Promise<void> {
    const a = this.announced;
    if (!a) return;
    const gone = this.urls.filter((u) => u.path === name && (u.params.version ?? "") === version && (u.params.group ?? "") === group);
    this.urls = this.urls.filter((u) => !gone.includes(u));
    a.services = a.services.filter((s) => !(s.name === name && s.version === version && s.group === group));
    const writes: Promise<void>[] = gone.map((u) => this.unexport(u));
    if (this.mode !== "interface") writes.push(this.publishInstance());
    await Promise.all(writes);
  }

  /** Removes `url`'s registered form, if any. */
  private async unexport(url: DubboUrl): Promise<void> {
    const prev = this.exported.get(url);
    this.exported.delete(url);
    if (prev && this.mode !== "application") await this.registry.unregister(prev).catch(() => {});
  }

  private urlOf(s: ServiceDescriptor): DubboUrl {
    const a = this.announced!;
    return providerUrl({
      interface: s.name,
      version: s.version,
      group: s.group,
      methods: s.methods,
      host: a.host,
      port: a.port,
      application: this.application,
      anyhost: a.anyhost,
      weight: this.o.weight,
      params: {
        // Dubbo writes it on providers that also register at application level.
        ...(this.mode === "interface" ? {} : { "service-name-mapping": "true" }),
        ...(this.o.warmupMs !== undefined ? { warmup: String(Math.round(this.o.warmupMs)) } : {}),
        ...(this.o.tag !== undefined ? { "dubbo.tag": this.o.tag.trim() } : {}),
      },
    });
  }

  /**
   * The application-level announcement: the metadata first (MetadataServiceV2, and the report
   * for `remote` storage), then the instance node carrying its revision and the interface →
   * application mappings.
   */
  private async publishInstance(): Promise<void> {
    const reg = this.registry;
    const a = this.announced;
    if (!a || !hasInstanceDiscovery(reg)) return;
    const app = this.application;
    const urls = this.effective();
    this.published = urls.map(toFullString).join("\n");
    if (urls.length === 0 && this.urls.length > 0) {
      // Every service disabled by a rule: no instance node, so no consumer of either level calls us.
      const inst = this.instance;
      this.instance = undefined;
      if (inst) await reg.unregisterInstance(inst.app, inst.id).catch(() => {});
      return;
    }
    const info = metadataInfo(app, urls);
    this.metadataService?.update(info);
    const storage = this.o.metadataStorage ?? "local";
    if (storage === "remote") await reg.putMetadata(app, info.revision, metadataJson(info));
    this.instance = { app, id: `${a.host}:${a.port}` };
    const json = instanceJson({ app, host: a.host, port: a.port, revision: info.revision, storage, timestamp: Date.now() });
    const interfaces = [...new Set(urls.map((u) => u.path))];
    // Side by side, so a registry that does not answer delays listen() once (each write is bounded), not twice.
    await Promise.all([
      reg.registerInstance(app, this.instance.id, json),
      ...interfaces.map((i) =>
        reg.addMapping(i, app).catch((e: Error) => registryLog(this.o.logger, "warn", `the mapping of ${i} to ${app} was not written: ${e.message}`)),
      ),
    ]);
  }

  /** Removes the instance node first (consumers of either level stop choosing this server), then the provider nodes; then waits `unregisterDelayMs`. */
  async unregister(): Promise<void> {
    const urls = [...this.exported.values()];
    this.exported.clear();
    const inst = this.instance;
    this.urls = [];
    this.instance = undefined;
    this.announced = undefined;
    if (inst && hasInstanceDiscovery(this.registry)) await this.registry.unregisterInstance(inst.app, inst.id).catch(() => {});
    await Promise.all(urls.map((u) => this.registry.unregister(u).catch(() => {})));
    if ((urls.length > 0 || inst) && this.o.unregisterDelayMs > 0) await new Promise((r) => setTimeout(r, this.o.unregisterDelayMs));
  }

  /** Closes the registry if the server made it. */
  async close(): Promise<void> {
    await this.governance?.close();
    if (this.owned) await this.registry.close().catch(() => {});
  }
}
