import { Method, Param, Service } from "../../src/index.js";

/**
 * The sample's service. A Dubbo Java consumer of `org.example.hello.HelloService` with a
 * `String sayHello(String name)` method finds these providers in ZooKeeper as well.
 */
@Service("org.example.hello.HelloService")
export class HelloService {
  constructor(readonly who = "provider") {}

  @Method()
  async sayHello(@Param("name") name: string): Promise<string> {
    return `hello ${name}, from ${this.who}`;
  }
}
