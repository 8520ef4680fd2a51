import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ProviderTuning, tunedRetries } from "../../src/client/cluster/tuning.js";
import type { ConfiguratorEntry } from "../../src/governance/configurators.js";
import { parseConfigurators } from "../../src/governance/configurators.js";
import { checkedTuning, tuningKind, tuningProblem } from "../../src/governance/tuning.js";
import type { MethodDescriptor } from "../../src/service/descriptors.js";

/** A method as the tuning reads it: its wire name and its Java name. */
const SAY = { name: "SayHello", propertyKey: "sayHello" } as MethodDescriptor;
const OTHER = { name: "other", propertyKey: "other" } as MethodDescriptor;

describe("tuning: Dubbo's timeout, retries and loadbalance from provider URLs and configurators", () => {
  it("timeout in Java's order: override <m>.timeout, provider <m>.timeout, override timeout, the client's, provider timeout", () => {
    const own = { timeout: "5000", "sayHello.timeout": "700" };
    assert.equal(ProviderTuning.of(undefined, own)?.timeoutMs(SAY, 300), 700, "the provider's method timeout beats the client's service timeout");
    assert.equal(ProviderTuning.of(undefined, own)?.timeoutMs(OTHER, 300), undefined, "the client's timeout beats the provider's");
    assert.equal(ProviderTuning.of(undefined, own)?.timeoutMs(OTHER, undefined), 5000, "the provider's when the client has none");
    assert.equal(ProviderTuning.of({ timeout: "2000" }, own)?.timeoutMs(OTHER, 300), 2000, "a configurator beats the client");
    assert.equal(ProviderTuning.of({ timeout: "2000" }, own)?.timeoutMs(SAY, 300), 700, "the provider's method timeout beats the override's service timeout");
    assert.equal(ProviderTuning.of({ "sayHello.timeout": "50", timeout: "2000" }, own)?.timeoutMs(SAY, 300), 50);
    assert.equal(ProviderTuning.of({ "SayHello.timeout": "60" }, {})?.timeoutMs(SAY, 300), 60, "the wire name too");
    assert.equal(ProviderTuning.of(undefined, { timeout: "-1" })?.timeoutMs(OTHER, undefined), undefined, "a provider value that is no timeout is skipped");
    assert.equal(ProviderTuning.of(undefined, { weight: "100" }), undefined, "nothing to tune: no object");
  });

  it("loadbalance: a configurator beats the client's explicit balancer; the provider's only when the client has none", () => {
    assert.equal(ProviderTuning.of({ loadbalance: "roundrobin" }, {})?.balancer(SAY, true), "roundrobin");
    assert.equal(ProviderTuning.of(undefined, { loadbalance: "roundrobin" })?.balancer(SAY, true), undefined);
    assert.equal(ProviderTuning.of(undefined, { loadbalance: "roundrobin" })?.balancer(SAY, false), "roundrobin");
    assert.equal(ProviderTuning.of(undefined, { loadbalance: "evil" })?.balancer(SAY, false), undefined, "an unknown name is skipped");
  });

  it("retries: override <m>.retries, the method's own, override retries, the client's", () => {
    assert.equal(tunedRetries(SAY, { retries: "0" }, undefined, 2), 0);
    assert.equal(tunedRetries(SAY, { retries: "0" }, 4, 2), 4);
    assert.equal(tunedRetries(SAY, { "sayHello.retries": "1", retries: "0" }, 4, 2), 1);
    assert.equal(tunedRetries(SAY, { weight: "5" }, undefined, 2), 2);
  });

  it("tuning values are checked: one problem per bad value, the rest of the rule kept", () => {
    assert.equal(tuningKind("timeout"), "timeout");
    assert.equal(tuningKind("sayHello.retries"), "retries");
    assert.equal(tuningKind("a.b.timeout"), undefined, "Java reads one dot as a method parameter");
    assert.equal(tuningKind("weight"), undefined);
    assert.equal(tuningProblem("timeout", "1000"), undefined);
    for (const bad of ["-1", "0", "1000000000000", "1e12", "abc", "1.5"]) assert.match(tuningProblem("timeout", bad) ?? "", /not a timeout/, bad);
    assert.match(tuningProblem("retries", "1000000000") ?? "", /not a retry count/);
    assert.equal(tuningProblem("loadbalance", "shortestresponse"), undefined);
    assert.match(tuningProblem("loadbalance", "evil") ?? "", /not a load balancer/);
    const entries: ConfiguratorEntry[] = parseConfigurators(
      "configVersion: v3.0\nscope: service\nkey: x.Y\nconfigs:\n  - side: consumer\n    parameters: { timeout: -1, retries: 1000000000, loadbalance: evil, weight: 300 }\n",
    );
    const problems: string[] = [];
    const out = checkedTuning(entries, (p) => problems.push(p));
    assert.deepEqual(out[0].parameters, { weight: "300" });
    assert.equal(problems.length, 3, problems.join("\n"));
  });
});
