// A module with an IDL-less service and a service bound to a .proto of its own.
export { GreetServiceImpl } from "../../samples/greet/greet-service.js";
export { InventoryService } from "./inventory-service.js";
