// Owns `Invocation`, `Attempt`. One call as the cluster sees it. Must not change: the rules every
// protocol relies on (docs/architecture.md).
import type { CallOptions } from "./call-options.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import type { Provider } from "../transport/client/provider.js";

/** One call as the cluster sees it. */
export interface Invocation {
  readonly method: MethodDescriptor;
  readonly args: readonly unknown[];
  /** Fires when the call times out or is cancelled: no further attempts. */
  readonly signal: AbortSignal;
  /** Set once a response message arrived or the request stream was consumed: never retry then. */
  committed: boolean;
  /** Failure handling is up to the caller (streams): policies that swallow errors must not. */
  readonly streaming: boolean;
  /** How many times this call may be retried (the method's `retries`, else the client's). */
  readonly retries: number;
  /** The caller's per-call options (routing reads its `tag` and `metadata`). */
  readonly options?: CallOptions;
}

/** One attempt of a call on one provider. */
export type Attempt<T> = (provider: Provider) => Promise<T>;
