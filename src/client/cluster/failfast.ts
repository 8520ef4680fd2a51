// Owns `failfast`. failfast: one attempt; its error is the call's error (for non-idempotent
// writes). Must not change: the documented retry and failure semantics of the policy.
import type { ClusterPolicy } from "./cluster.js";
import { runAttempt, selectProvider } from "./cluster.js";

/** failfast: one attempt; its error is the call's error (for non-idempotent writes). */
export const failfast: ClusterPolicy = {
  name: "failfast",
  invoke(inv, attempt, ctx) {
    return runAttempt(selectProvider(inv, ctx, new Set()), attempt, ctx, inv);
  },
};
