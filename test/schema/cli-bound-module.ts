// A module whose only service is bound to a .proto of its own (samples/greet/greet.proto).
export { GreetServiceImpl } from "../../samples/greet/greet-service.js";
