// Owns `MethodLabels`, `LabelCache`. The span name and attribute sets of one method under one RPC
// system, built once and shared by its calls: metric points with the same attributes reuse one
// object. Must not change: the OpenTelemetry names, and no cost per call when telemetry is off.
import type { Attributes } from "@opentelemetry/api";
import { Code } from "../protocol/code.js";
import type { MethodDescriptor } from "../service/descriptors.js";
import { ATTR_ERROR_TYPE, ATTR_RPC_METHOD, ATTR_RPC_STATUS_CODE, ATTR_RPC_SYSTEM_NAME, statusCodeName } from "./semconv.js";

/**
 * The span name and attribute sets of one method under one RPC system, built once and shared by
 * its calls: metric points with the same attributes reuse one object.
 */
export class MethodLabels {
  /** `pkg.Service/Method`: the span name and `rpc.method`. */
  readonly name: string;
  /** `rpc.system.name` and `rpc.method`. */
  readonly base: Attributes;
  /** Calls of this method in progress (server side, while metrics are on). */
  active = 0;
  private readonly byStatus: (Attributes | undefined)[] = [];

  constructor(
    md: MethodDescriptor,
    readonly system: string,
  ) {
    this.name = `${md.serviceName}/${md.name}`;
    this.base = { [ATTR_RPC_SYSTEM_NAME]: system, [ATTR_RPC_METHOD]: this.name };
  }

  /** The status name of a code in this system's spelling. */
  status(code: Code): string {
    return statusCodeName(this.system, code);
  }

  /** `base` plus `rpc.status_code`, and `error.type` when the call failed. */
  withStatus(code: Code, failed: boolean): Attributes {
    const i = failed ? code + 17 : code;
    let a = this.byStatus[i];
    if (a === undefined) {
      const status = this.status(code);
      a = { ...this.base, [ATTR_RPC_STATUS_CODE]: status };
      if (failed) a[ATTR_ERROR_TYPE] = status;
      this.byStatus[i] = a;
    }
    return a;
  }
}

/** The labels of each method and system, made on first use. */
export class LabelCache {
  private readonly methods = new WeakMap<MethodDescriptor, Map<string, MethodLabels>>();
  private readonly all: MethodLabels[] = [];

  /** Every label set made so far. */
  forEach(fn: (l: MethodLabels) => void): void {
    for (const l of this.all) fn(l);
  }

  of(md: MethodDescriptor, system: string): MethodLabels {
    let bySystem = this.methods.get(md);
    if (bySystem === undefined) {
      bySystem = new Map();
      this.methods.set(md, bySystem);
    }
    let l = bySystem.get(system);
    if (l === undefined) {
      l = new MethodLabels(md, system);
      bySystem.set(system, l);
      this.all.push(l);
    }
    return l;
  }
}
