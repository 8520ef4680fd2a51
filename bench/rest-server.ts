// The REST benchmark's server (bench/rest.mjs): one method reachable as `GET /greet/{name}` and
// by its RPC path `POST /bench.RestGreeter/greet`. Listens on PORT; prints "ready" once it does.
import { createServer, Get, Method, Path, Service } from "../src/index.js";

class Greeting {
  constructor(readonly greeting: string) {}
}

@Service("bench.RestGreeter")
class RestGreeter {
  @Get("/greet/{name}")
  @Method()
  greet(@Path("name") name: string): Greeting {
    return new Greeting(name);
  }
}

const server = createServer({ services: [new RestGreeter()] });
server.listen({ port: Number(process.env.PORT ?? 0), host: "127.0.0.1" }).then(() => console.log(`ready ${server.url}`));
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
