// Owns `converterExtras`: the converters converters.ts leaves out so that a client reviving plain
// results does not carry them: Java value-class text (`T.bigDecimal`, `T.localDate`… checked by
// their parsers) and `StreamedFile` uploads. binder.ts registers them; the web client loads this
// module for a method whose types need it. Must not change: bad input is a 4xx naming the problem.
import type { JavaText } from "../service/type-desc.js";
import { StreamedFile } from "../service/file-upload.js";
import { checkDigits } from "./big-numbers.js";
import { bindError } from "./bind-error.js";
import { type ConverterExtras, type Converter, describe, fail, toBytes } from "./converters.js";
import { JavaValueError, javaValueExample, parseJavaValue } from "./java-values.js";

/**
 * The text of a Java value class (`T.bigDecimal`, `T.localDate`, `T.enum(…)`…): taken as sent
 * once it parses as one (a decimal's digits bounded by `limits.maxNumberDigits` first), else a 400
 * naming `w` and saying what is wrong.
 */
function javaTextConverter(java: JavaText): Converter {
  const expected = javaValueExample(java);
  return (v, w) => {
    if (typeof v !== "string") return fail(w, expected, v);
    if (java.type === "decimal") checkDigits(v, w);
    try {
      parseJavaValue(java, v);
    } catch (e) {
      if (e instanceof JavaValueError) throw bindError(`${w} must be ${expected}; ${describe(v)}: ${e.message}`);
      throw e;
    }
    return v;
  };
}

/** Outside multipart (JSON base64, XML), a StreamedFile is held in memory, bounded by maxBodyBytes. */
const uploadConverter: Converter = (v, w) => (v instanceof StreamedFile ? v : StreamedFile.fromBytes(toBytes(v, w)));

/** What converters.ts's `useConverterExtras` takes. */
export const converterExtras: ConverterExtras = { javaText: javaTextConverter, upload: uploadConverter };
