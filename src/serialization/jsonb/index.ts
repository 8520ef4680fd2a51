/** fastjson2's JSONB: a bounded reader and a Dubbo-shaped writer. */
export { JsonbError, readJsonb, type JsonbReadLimits } from "./reader.js";
export { JsonbWriter, writeJsonb } from "./writer.js";
