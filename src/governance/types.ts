// Owns `RouteCall`, `RouteTarget`, `RouteStep`, `RouteExplanation`. One invocation, as routers see
// it. Must not change: Dubbo 3.3's rule semantics (the oracle tests compare with Dubbo Java).
import type { DubboUrl } from "../registry/url.js";

/** The types of the routing contract (router-chain.ts re-exports them). */

/** One invocation, as routers see it. */
export interface RouteCall {
  readonly method: string;
  readonly args: readonly unknown[];
  /** Invocation attachments, including `dubbo.tag` and `dubbo.force.tag`. */
  readonly attachments: Readonly<Record<string, string>>;
}

/** A provider: our Provider objects carry the registry URL. */
export interface RouteTarget {
  readonly url: DubboUrl;
}

/** What one router did: its name (Dubbo's), the rule key it applied, how many providers it kept (and which), why. */
export interface RouteStep {
  readonly router: string;
  readonly rule?: string;
  readonly kept: number;
  readonly message: string;
  /** The providers this router kept (its output, the next router's input). */
  readonly keptUrls?: readonly DubboUrl[];
}

/** Each router's step, in Dubbo's order, the providers kept at the end, and the whole as text for an operator. */
export interface RouteExplanation {
  readonly steps: readonly RouteStep[];
  readonly kept: readonly DubboUrl[];
  readonly text: string;
}
