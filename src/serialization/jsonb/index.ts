/** fastjson2's JSONB: a bounded reader and a Dubbo-shaped writer. */
export { JsonbError, type JsonbReadLimits, readJsonb } from "./reader.js";
export { JsonbWriter, writeJsonb } from "./writer.js";
