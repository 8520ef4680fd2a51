import * as assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { closeClient, Code, createClient, createServer, FailoverError, Method, Param, RpcError, Service, type TripleServer } from "../../src/index.js";

/** Counts the calls that reached a handler, by method. */
const reached: Record<string, number> = {};

@Service("retry.Probe")
class Probe {
  @Method()
  fail(@Param("code") code: number): string {
    reached.fail = (reached.fail ?? 0) + 1;
    throw new RpcError(code as Code, `refused with ${Code[code]}`);
  }

  @Method()
  crash(): string {
    reached.crash = (reached.crash ?? 0) + 1;
    throw new Error("name is not right: x");
  }

  @Method({ idempotent: true })
  lookup(@Param("code") code: number): string {
    reached.lookup = (reached.lookup ?? 0) + 1;
    throw new RpcError(code as Code, `busy: ${Code[code]}`);
  }

  @Method({ retries: 0 })
  charge(): string {
    reached.charge = (reached.charge ?? 0) + 1;
    throw new Error("card declined by the bank");
  }
}

const NEVER_RETRIED = [
  Code.InvalidArgument,
  Code.NotFound,
  Code.AlreadyExists,
  Code.PermissionDenied,
  Code.Unauthenticated,
  Code.FailedPrecondition,
  Code.OutOfRange,
  Code.ResourceExhausted,
  Code.DeadlineExceeded,
  Code.Cancelled,
];

describe("the client retries only what is safe", () => {
  const servers: TripleServer[] = [];
  let providers: string[];
  before(async () => {
    const impl = new Probe();
    for (let i = 0; i < 3; i++) {
      const s = createServer({ services: [impl] });
      await s.listen({ port: 0 });
      servers.push(s);
    }
    providers = servers.map((s) => s.url);
  });
  after(async () => {
    await Promise.all(servers.map((s) => s.close()));
  });

  for (const protocol of ["triple", "grpc", "connect", "grpc-web"] as const) {
    describe(protocol, () => {
      for (const code of NEVER_RETRIED) {
        it(`${Code[code]} is not retried, and the caller gets the server's error as it is`, async () => {
          const client = createClient(Probe, { providers, protocol });
          reached.fail = 0;
          try {
            await assert.rejects(client.fail(code), (e: RpcError) => {
              assert.ok(!(e instanceof FailoverError), "no failover sentence");
              assert.equal(e.code, code);
              assert.equal(e.rawMessage, `refused with ${Code[code]}`);
              return true;
            });
            assert.equal(reached.fail, 1, "the handler ran once");
          } finally {
            closeClient(client);
          }
        });
      }

      it("unknown (a handler's plain error) is retried, with Dubbo's sentence and the server's words at hand", async () => {
        const client = createClient(Probe, { providers, protocol });
        reached.crash = 0;
        try {
          await assert.rejects(client.crash(), (e: FailoverError) => {
            assert.ok(e instanceof FailoverError);
            assert.match(e.message, /^Failed to invoke the method crash in the service retry\.Probe\. Tried 2 times \(3 attempts\) of the providers \[/);
            assert.match(e.message, /Last error is unknown: name is not right: x$/);
            assert.equal(e.code, Code.Unknown);
            assert.equal(e.rawMessage, "name is not right: x");
            assert.ok(e.cause instanceof RpcError);
            assert.equal(e.attempts, 3);
            return true;
          });
          assert.equal(reached.crash, 3);
        } finally {
          closeClient(client);
        }
      });

      it("an idempotent method is also retried after resource_exhausted, aborted and unimplemented, not after invalid_argument", async () => {
        const client = createClient(Probe, { providers, protocol });
        try {
          for (const code of [Code.ResourceExhausted, Code.Aborted, Code.Unimplemented]) {
            reached.lookup = 0;
            await assert.rejects(client.lookup(code), (e: FailoverError) => e instanceof FailoverError && e.code === code);
            assert.equal(reached.lookup, 3, `${Code[code]}: three attempts`);
          }
          reached.lookup = 0;
          await assert.rejects(client.lookup(Code.InvalidArgument), (e: RpcError) => !(e instanceof FailoverError));
          assert.equal(reached.lookup, 1);
        } finally {
          closeClient(client);
        }
      });

      it("@Method({ retries: 0 }) runs once and gives the original error", async () => {
        const client = createClient(Probe, { providers, protocol });
        reached.charge = 0;
        try {
          await assert.rejects(client.charge(), (e: RpcError) => {
            assert.ok(!(e instanceof FailoverError));
            assert.equal(e.message, "card declined by the bank");
            return true;
          });
          assert.equal(reached.charge, 1);
        } finally {
          closeClient(client);
        }
      });

      it("the client's per-method option and failfast do the same", async () => {
        const perMethod = createClient(Probe, { providers, protocol, methods: { crash: { retries: 0 } } });
        const failfast = createClient(Probe, { providers, protocol, cluster: "failfast" });
        try {
          reached.crash = 0;
          await assert.rejects(perMethod.crash(), (e: RpcError) => !(e instanceof FailoverError) && e.message === "name is not right: x");
          await assert.rejects(failfast.crash(), (e: RpcError) => !(e instanceof FailoverError) && e.message === "name is not right: x");
          assert.equal(reached.crash, 2);
        } finally {
          closeClient(perMethod);
          closeClient(failfast);
        }
      });
    });
  }

  it("a provider that refuses connections is retried on another (the call never reached it)", async () => {
    const client = createClient(Probe, { providers: ["127.0.0.1:1", providers[0]], loadBalance: "roundrobin" });
    reached.fail = 0;
    try {
      for (let i = 0; i < 4; i++) {
        await assert.rejects(client.fail(Code.NotFound), (e: RpcError) => e.code === Code.NotFound);
      }
      assert.equal(reached.fail, 4, "every call reached the live provider once");
    } finally {
      closeClient(client);
    }
  });
});
