// Owns `localAddress`. The first non-internal IPv4 address of this host, else 127.0.0.1: what Dubbo
// announces for a server bound to every interface, and the consumer address failover messages
// quote. Must not change: every bound on what a peer can make us hold (docs/security.md).
import * as os from "node:os";

let local: string | undefined;

/**
 * The first non-internal IPv4 address of this host, else 127.0.0.1: what Dubbo announces for a
 * server bound to every interface, and the consumer address failover messages quote. Read once.
 */
export function localAddress(): string {
  if (local !== undefined) return local;
  local = "127.0.0.1";
  for (const list of Object.values(os.networkInterfaces())) {
    const found = list?.find((a) => a.family === "IPv4" && !a.internal);
    if (found) {
      local = found.address;
      break;
    }
  }
  return local;
}
