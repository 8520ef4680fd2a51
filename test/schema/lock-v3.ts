import { Method, Param, Service } from "../../src/index.js";

/** The schema-lock CLI test's service, compatible: a new method. */
@Service("lockcli.Calc")
export class Calc {
  @Method() async add(@Param("x") x: number, @Param("y") y: number): Promise<number> {
    return x + y;
  }
  @Method() async sub(@Param("x") x: number, @Param("y") y: number): Promise<number> {
    return x - y;
  }
  @Method() async mul(@Param("x") x: number, @Param("y") y: number): Promise<number> {
    return x * y;
  }
}
