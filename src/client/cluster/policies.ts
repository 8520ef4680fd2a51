// Owns `clusterPolicy`. The policy of a name (or a custom policy as it is); throws naming the valid
// choices. Must not change: the documented retry and failure semantics of the policy.
import { broadcast } from "./broadcast.js";
import type { ClusterPolicy, ClusterPolicyName } from "./cluster.js";
import { failback } from "./failback.js";
import { failfast } from "./failfast.js";
import { failover } from "./failover.js";
import { failsafe } from "./failsafe.js";
import { forking } from "./forking.js";

const POLICIES: Readonly<Record<ClusterPolicyName, ClusterPolicy>> = {
  failover,
  failfast,
  failsafe,
  failback,
  forking,
  broadcast,
};

/** The policy of a name (or a custom policy as it is); throws naming the valid choices. */
export function clusterPolicy(p: ClusterPolicyName | ClusterPolicy | undefined): ClusterPolicy {
  if (p === undefined) return failover;
  if (typeof p === "object") return p;
  if (!Object.hasOwn(POLICIES, p)) throw new TypeError(`createClient: unknown cluster policy "${p}"; use one of ${Object.keys(POLICIES).join(", ")}`);
  return POLICIES[p];
}
