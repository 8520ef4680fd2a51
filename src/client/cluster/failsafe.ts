// Owns `failsafe`. failsafe: one attempt; a failure resolves to `undefined` instead of rejecting
// (for calls whose failure must not disturb the caller, such as audit logging). Must not change:
// the documented retry and failure semantics of the policy.
import type { ClusterPolicy } from "./cluster.js";
import { failfast } from "./failfast.js";

/**
 * failsafe: one attempt; a failure resolves to `undefined` instead of rejecting (for calls whose
 * failure must not disturb the caller, such as audit logging). Streaming calls fail as usual:
 * there is no empty stream to stand in for them.
 */
export const failsafe: ClusterPolicy = {
  name: "failsafe",
  async invoke<T>(...a: Parameters<ClusterPolicy["invoke"]>) {
    const [inv] = a;
    try {
      return (await failfast.invoke(...a)) as T;
    } catch (e) {
      if (inv.streaming) throw e;
      return undefined as T;
    }
  },
};
