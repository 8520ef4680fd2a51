// Our side of bench/dubbo-java.mjs, org.triplerpc.interop.Bench (test/java/dubbo):
//   node dist/bench/dubbo-java-node.js server [port]                 prints "ready <port>"
//   node dist/bench/dubbo-java-node.js client <url> <serialization> <concurrency> <seconds> <warmup>
// The client is a closed loop (`concurrency` calls in flight, each sent when the last answered)
// and prints one JSON line: calls, failures, ms, rate (calls/s).
import { closeClient, createClient, createServer, Field, JavaClass, Method, Param, Service, T, unimplemented } from "../src/index.js";

@JavaClass("org.triplerpc.interop.Address")
class Address {
  @Field({ optional: true }) city?: string;
  @Field(T.int32) zip!: number;
}

@Service("org.triplerpc.interop.Bench")
class Bench {
  @Method({ returns: Address })
  next(@Param({ name: "a", type: Address }) _a: Address): Promise<Address> {
    return unimplemented();
  }
}

class BenchProvider extends Bench {
  override async next(a: Address): Promise<Address> {
    return Object.assign(new Address(), { city: a.city, zip: a.zip + 1 });
  }
}

async function serve(port: number): Promise<void> {
  const server = createServer({ services: [new BenchProvider()] });
  await server.listen({ port, host: "127.0.0.1" });
  console.log(`ready ${new URL(server.url).port}`);
  process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
}

/** `concurrency` lanes calling back to back for `ms`; counts calls and failures. */
async function loop(b: Bench, concurrency: number, ms: number) {
  const a = Object.assign(new Address(), { city: "Zürich", zip: 8001 });
  const start = performance.now();
  const end = start + ms;
  let calls = 0;
  let failures = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < end) {
        try {
          if ((await b.next(a)).zip !== 8002) failures++;
        } catch {
          failures++;
        }
        calls++;
      }
    }),
  );
  return { calls, failures, ms: performance.now() - start };
}

async function load(url: string, serialization: "hessian2" | "fastjson2", concurrency: number, seconds: number, warmup: number): Promise<void> {
  const b = createClient(Bench, { providers: [url], serialization, retries: 0, timeoutMs: 10_000 });
  await loop(b, concurrency, warmup * 1000);
  const r = await loop(b, concurrency, seconds * 1000);
  console.log(JSON.stringify({ ...r, rate: (r.calls * 1000) / r.ms }));
  await closeClient(b);
}

const [mode, ...a] = process.argv.slice(2);
if (mode === "server") void serve(Number(a[0] ?? 0));
else if (mode === "client") void load(a[0], a[1] as "hessian2" | "fastjson2", Number(a[2]), Number(a[3]), Number(a[4]));
else throw new Error("usage: dubbo-java-node.js server [port] | client <url> <serialization> <concurrency> <seconds> <warmup>");
