/** fastjson2's JSONB: a bounded reader and a Dubbo-shaped writer. */
export { JsonbError, readJsonb } from "./reader.js";
export { writeJsonb } from "./writer.js";
