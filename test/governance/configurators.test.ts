import * as assert from "node:assert/strict";
import { describe, it } from "node:test";
import { configureUrl, isDisabled, parseConfigurators } from "../../src/governance/configurators.js";
import { migrationPlan, parseMigration, shouldMigrate } from "../../src/governance/migration.js";
import { parseUrl } from "../../src/registry/url.js";

/**
 * Configurators and migration rules without a config center: Java's `ConfigParser` entries and
 * `AbstractConfigurator` matching (side, host, providerAddresses, application, service key,
 * v3.0 match, order), the 2.6 `override://` form, refusals with the reason.
 */

const IFACE = "org.demo.Greeter";
/** A provider URL as a consumer's configurators see it (Java's merged view: side consumer, the consumer's application). */
const merged = parseUrl(`tri://10.0.0.5:50051/${IFACE}?interface=${IFACE}&application=web&remote.application=prov&side=consumer&weight=100&region=hz`);
/** A provider's own URL, as it configures it. */
const own = parseUrl(`tri://10.0.0.5:50051/${IFACE}?interface=${IFACE}&application=prov&side=provider&weight=100`);

function rule(scope: string, key: string, item: string): string {
  return `configVersion: v3.0\nscope: ${scope}\nkey: ${key}\nenabled: true\nconfigs:\n${item}`;
}

describe("configurators: Java's matching", () => {
  it("a consumer-side item applies on the consumer's own host (0.0.0.0 or its address), not elsewhere", () => {
    const any = parseConfigurators(rule("service", IFACE, "  - side: consumer\n    parameters: { weight: 300 }\n"));
    assert.equal(configureUrl(merged, [any], "10.0.0.1").params.weight, "300");
    const mine = parseConfigurators(rule("service", IFACE, "  - side: consumer\n    addresses: [10.0.0.1]\n    parameters: { weight: 300 }\n"));
    assert.equal(configureUrl(merged, [mine], "10.0.0.1").params.weight, "300");
    assert.equal(configureUrl(merged, [mine], "10.0.0.9").params.weight, "100", "another consumer host");
    assert.equal(configureUrl(own, [any], "10.0.0.1").params.weight, "100", "a provider-side URL: the side differs");
  });

  it("a provider-side item matches the provider's host only (Java compares no port); providerAddresses names one", () => {
    const hostOnly = parseConfigurators(rule("service", IFACE, '  - side: provider\n    addresses: ["10.0.0.5:1"]\n    parameters: { disabled: true }\n'));
    assert.ok(isDisabled(configureUrl(own, [hostOnly], "")), "10.0.0.5:1 disables the provider on port 50051 too");
    const named = parseConfigurators(
      rule(
        "service",
        IFACE,
        '  - side: provider\n    addresses: ["10.0.0.5"]\n    providerAddresses: ["10.0.0.5:50052"]\n    parameters: { disabled: true }\n',
      ),
    );
    assert.ok(!isDisabled(configureUrl(own, [named], "")));
    for (const pa of ["10.0.0.5:50051", "10.0.0.5", "0.0.0.0", "0.0.0.0:*", "0.0.0.0:50051"]) {
      const r = parseConfigurators(rule("service", IFACE, `  - side: provider\n    providerAddresses: ["${pa}"]\n    parameters: { disabled: true }\n`));
      assert.ok(isDisabled(configureUrl(own, [r], "")), pa);
    }
  });

  it("the service key and the application must match; application scope lists services", () => {
    const other = parseConfigurators(rule("service", "g1/org.demo.Other:1.0", "  - side: consumer\n    parameters: { weight: 5 }\n"));
    assert.equal(configureUrl(merged, [other], "10.0.0.1").params.weight, "100");
    const grouped = parseConfigurators(rule("service", `g1/${IFACE}:1.0`, "  - side: consumer\n    parameters: { weight: 5 }\n"));
    assert.equal(configureUrl({ ...merged, params: { ...merged.params, group: "g1", version: "1.0" } }, [grouped], "10.0.0.1").params.weight, "5");
    const apps = parseConfigurators(rule("service", IFACE, "  - side: consumer\n    applications: [mobile]\n    parameters: { weight: 5 }\n"));
    assert.equal(configureUrl(merged, [apps], "10.0.0.1").params.weight, "100", "the consumer is web, not mobile");
    const app = parseConfigurators(rule("application", "web", `  - side: consumer\n    services: [org.demo.Other, ${IFACE}]\n    parameters: { weight: 6 }\n`));
    assert.equal(configureUrl(merged, [app], "10.0.0.1").params.weight, "6");
    const appOther = parseConfigurators(rule("application", "mobile", "  - side: consumer\n    parameters: { weight: 6 }\n"));
    assert.equal(configureUrl(merged, [appOther], "10.0.0.1").params.weight, "100");
  });

  it("v3.0 match: param, address cird, providerAddress, app", () => {
    const yes = parseConfigurators(
      rule(
        "service",
        IFACE,
        '  - side: consumer\n    match:\n      param: [{ key: region, value: { exact: hz } }]\n      address: { cird: "10.0.0.0/8" }\n      providerAddress: { prefix: "10.0.0.5:" }\n      app: { oneof: [{ exact: web }] }\n    parameters: { weight: 7 }\n',
      ),
    );
    assert.equal(configureUrl(merged, [yes], "10.0.0.1").params.weight, "7");
    assert.equal(configureUrl(merged, [yes], "192.168.0.1").params.weight, "100", "the consumer's address is outside 10/8");
    const no = parseConfigurators(
      rule("service", IFACE, "  - side: consumer\n    match:\n      param: [{ key: region, value: { exact: sh } }]\n    parameters: { weight: 7 }\n"),
    );
    assert.equal(configureUrl(merged, [no], "10.0.0.1").params.weight, "100");
  });

  it("order: by host string then priority, application rule before service rule; steering keys never written", () => {
    const svc = parseConfigurators(
      rule(
        "service",
        IFACE,
        "  - side: consumer\n    parameters: { weight: 1, timeout: 10 }\n  - side: consumer\n    addresses: [10.0.0.1]\n    parameters: { weight: 2 }\n",
      ),
    );
    const out = configureUrl(
      merged,
      [parseConfigurators(rule("application", "web", "  - side: consumer\n    parameters: { weight: 9, application: x, side: provider }\n")), svc],
      "10.0.0.1",
    );
    assert.equal(out.params.weight, "2", "0.0.0.0 first, then the specific host; the service rule after the application's");
    assert.equal(out.params.timeout, "10");
    assert.equal(out.params.application, "web");
    assert.equal(out.params.side, "consumer");
  });

  it("the 2.6 form (a JSON array of override URLs) is read; enabled: false entries do nothing", () => {
    const list = parseConfigurators(`["override://0.0.0.0/${IFACE}?category=configurators&dynamic=false&weight=42"]`);
    assert.equal(configureUrl(merged, [list], "10.0.0.1").params.weight, "42");
    const off = parseConfigurators(rule("service", IFACE, "  - side: consumer\n    enabled: false\n    parameters: { weight: 3 }\n"));
    assert.equal(configureUrl(merged, [off], "10.0.0.1").params.weight, "100");
  });

  it("refused with the reason: no parameters, a bad scope, a YAML bomb, too many entries", () => {
    assert.throws(() => parseConfigurators(rule("service", IFACE, "  - side: consumer\n")), /parameters is missing or empty/);
    assert.throws(
      () => parseConfigurators(rule("nowhere", IFACE, "  - side: consumer\n    parameters: { a: 1 }\n")),
      /scope must be "service" or "application"/,
    );
    const bomb = `a: &a [x,x,x,x,x,x,x,x]\n${Array.from({ length: 60 }, (_, i) => `b${i}: *a`).join("\n")}\nscope: service\nkey: x\nconfigs: []\n`;
    assert.throws(() => parseConfigurators(bomb), /YAML aliases/);
    const many = rule(
      "service",
      IFACE,
      `  - side: consumer\n    addresses: [${Array.from({ length: 1001 }, (_, i) => `"10.0.${i >> 8}.${i & 255}"`).join(",")}]\n    parameters: { a: 1 }\n`,
    );
    assert.throws(() => parseConfigurators(many), /more than 1000 entries/);
  });
});

describe("migration rules", () => {
  const step = (text: string, key = IFACE, apps: readonly string[] = []) => migrationPlan(parseMigration(text), key, apps)?.mode;
  it("steps map onto discovery; an interfaces entry wins; a bad step is refused", () => {
    const r = `key: web\nstep: FORCE_APPLICATION\ninterfaces:\n  - serviceKey: ${IFACE}\n    step: FORCE_INTERFACE\n`;
    assert.equal(step(r), "interface");
    assert.equal(step(r, "org.demo.Other"), "application");
    assert.equal(step("key: web\nstep: APPLICATION_FIRST\n"), "application-first");
    assert.equal(step("key: web\n"), undefined);
    assert.throws(() => parseMigration("key: web\nstep: SOMETIMES\n"), /step must be FORCE_INTERFACE, APPLICATION_FIRST or FORCE_APPLICATION/);
  });

  it("fields resolve one by one as Java's getValue: the interface's entry, a provider application's, the top level, the default", () => {
    const text = [
      "key: web",
      "step: APPLICATION_FIRST",
      "threshold: 0.5",
      "proportion: 60",
      "interfaces:",
      `  - serviceKey: ${IFACE}:1.0.0`,
      "    threshold: 2",
      "applications:",
      "  - serviceKey: prov",
      "    step: FORCE_APPLICATION",
      "    delay: 3",
      "    force: true",
    ].join("\n");
    const rule = parseMigration(text);
    assert.deepEqual(migrationPlan(rule, `${IFACE}:1.0.0`, ["prov"]), { mode: "application", threshold: 2, proportion: 60, delay: 3, force: true });
    assert.deepEqual(migrationPlan(rule, IFACE, []), { mode: "application-first", threshold: 0.5, proportion: 60, delay: 0, force: false });
    assert.deepEqual(migrationPlan(parseMigration("step: FORCE_INTERFACE"), IFACE, []), {
      mode: "interface",
      threshold: 0,
      proportion: 100,
      delay: 0,
      force: false,
    });
    assert.throws(() => parseMigration("step: APPLICATION_FIRST\nproportion: 150"), /proportion must be a whole number from 0 to 100/);
    assert.throws(() => parseMigration("step: APPLICATION_FIRST\nthreshold: -1"), /threshold must be a number from 0/);
    assert.throws(() => parseMigration("step: FORCE_APPLICATION\ndelay: 100000"), /delay must be a whole number from 0 to 600/);
  });

  it("the address comparison is Java's DefaultMigrationAddressComparator", () => {
    assert.equal(shouldMigrate(0, 5, 0), false, "the new level empty: never");
    assert.equal(shouldMigrate(1, 0, 5), true, "the old level empty: always");
    assert.equal(shouldMigrate(1, 5, 0), true, "threshold 0 (the default): any address");
    assert.equal(shouldMigrate(2, 4, 0.5), true);
    assert.equal(shouldMigrate(1, 4, 0.5), false);
  });
});
