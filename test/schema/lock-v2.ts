import { Method, Param, Service } from "../../src/index.js";

/** The schema-lock CLI test's service, breaking: add's parameters reordered without tags (y and x swap numbers), sub removed. */
@Service("lockcli.Calc")
export class Calc {
  @Method() async add(@Param("y") y: number, @Param("x") x: number): Promise<number> {
    return x + y;
  }
}
