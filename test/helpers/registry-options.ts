import type { ClientOptions, ClientRegistryOptions, ServerOptions, ServerRegistryOptions } from "../../src/index.js";

/** A test provider's options: the server's, with the registry group's settings (the helper sets the address). */
export type ProviderExtra = Omit<ServerOptions, "registry"> & { registry?: Partial<ServerRegistryOptions> };

/** A test consumer's options: the client's, with the registry group's settings (the helper sets the address unless given). */
export type ConsumerExtra = Omit<ClientOptions, "registry"> & { registry?: Partial<ClientRegistryOptions> };
