/**
 * Compile-time assertions for the type tests in this folder: checked by `npm run typecheck`
 * (test/ is in tsconfig.json), never run. A wrong expectation is a type error, so it fails
 * typecheck and CI.
 */

/** True when A and B are the same type (not merely assignable either way). */
export type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;

/**
 * `expectType<Expected>()(value)`: a type error unless `value`'s type is exactly `Expected`
 * (the second, impossible argument names the mismatch in the compiler's message).
 */
export function expectType<Expected>() {
  return <Actual>(_value: Actual, ..._mismatch: Equal<Actual, Expected> extends true ? [] : [expected: Expected, actual: Actual]): void => {};
}

/** `expectTrue<Equal<A, B>>()`: for types without a value at hand. */
export function expectTrue<_T extends true>(): void {}
