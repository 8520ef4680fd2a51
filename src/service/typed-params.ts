/**
 * Compile-time checks of `@Method({ params })` and `@Field(Type)` against the signature they
 * decorate: types only, nothing here exists at run time. A mismatch is the decorator's return
 * type (`{ error: "…"; declared; parameter }`), which TypeScript reports in its own words.
 */
import type { TypeSpec, ValueOf } from "./type-desc.js";

/** One entry of `@Method({ params })`: a type spec, or `@Param`'s options, or `{ context: true }`. */
type Entry = TypeSpec | { readonly type?: TypeSpec; readonly optional?: boolean; readonly context?: boolean; readonly name?: string };

/**
 * What the binder hands the method for one `params` entry (`any`: not checked); for a method whose
 * requests stream in (`Streams` true: client or bidi streaming) the entry is each message's type,
 * and the parameter receives an `AsyncIterable` of them.
 */
type ArgValue<E, Streams extends boolean> = E extends { readonly context: true } ? any : Streams extends true ? AsyncIterable<EntryValue<E>> : EntryValue<E>;

/** What the binder hands the method for one `params` entry, one message (`any`: not checked). */
type EntryValue<E> = E extends readonly unknown[] | (abstract new (...args: never[]) => unknown) | { readonly kind: string }
  ? ValueOf<E>
  : E extends { readonly context: true }
    ? any
    : E extends { readonly type: infer S }
      ? ValueOf<S> | (E extends { readonly optional: true } ? undefined : never)
      : any;

type Next<I extends unknown[]> = [...I, unknown];

/** ` (name)` for an options entry that names its parameter (a constructor's `name` is not one). */
type NameOf<E> = E extends (...args: never[]) => unknown ? "" : E extends { readonly name: infer N extends string } ? (string extends N ? "" : ` (${N})`) : "";

/** The message when `params` and the method do not have as many parameters (an object type, not an alias: compilers print it whole). */
type CountMismatch<P extends readonly unknown[], A extends readonly unknown[]> = P extends unknown
  ? { error: `@Method({ params }): params.length is ${P["length"]} but the method takes ${Required<A>["length"]} parameters: list every parameter, in order` }
  : never;

/**
 * `void` when each entry's values fit the method's parameter at its position (and there are as
 * many entries as parameters), else the first mismatch. A method with a rest parameter, or a
 * `params` list that is not a literal tuple, is not checked.
 */
export type ParamsCheck<P, A extends readonly unknown[], Streams extends boolean = false> = P extends readonly Entry[]
  ? number extends P["length"] | A["length"]
    ? void
    : [Required<A>["length"], ArgValues<P, Streams>] extends [P["length"], A]
      ? void
      : FirstMismatch<P, A, Streams>
  : void;

/** What the binder hands the method for each entry, as a tuple (compared whole first: the fast path). */
type ArgValues<P, Streams extends boolean> = { -readonly [I in keyof P]: ArgValue<P[I], Streams> };

/** The first entry that does not fit its parameter, or a count that differs (the slow path, only on a mismatch). */
type FirstMismatch<P, A extends readonly unknown[], Streams extends boolean = false, I extends unknown[] = []> = P extends readonly Entry[]
  ? number extends P["length"] | A["length"]
    ? void
    : I["length"] extends P["length"]
      ? Required<A>["length"] extends P["length"]
        ? void
        : CountMismatch<P, A>
      : I["length"] extends Required<A>["length"]
        ? CountMismatch<P, A>
        : [ArgValue<P[I["length"]], Streams>] extends [A[I["length"]]]
          ? FirstMismatch<P, A, Streams, Next<I>>
          : {
              error: `@Method({ params }): params[${I["length"]}]${NameOf<P[I["length"]]>} does not fit the method's parameter #${Next<I>["length"]}`;
              declared: ArgValue<P[I["length"]], Streams>;
              parameter: A[I["length"]];
            }
  : void;

/** True for the kinds whose requests stream in. */
type StreamsIn<K> = K extends "client_streaming" | "bidi_streaming" ? true : false;

/**
 * `@Method(…)`, typed both ways it can be called: legacy (`experimentalDecorators`: the method's
 * descriptor) and standard (TC39: the method and its context). `P` is the `params` tuple, `K` the
 * declared `kind`.
 */
export interface TypedMethodDecorator<P, K = undefined> {
  <F extends (...args: never[]) => unknown>(
    target: object,
    propertyKey: string | symbol,
    descriptor: TypedPropertyDescriptor<F>,
  ): ParamsCheck<P, Parameters<F>, StreamsIn<K>>;
  <F extends (...args: never[]) => unknown>(value: F, context: ClassMethodDecoratorContext): ParamsCheck<P, Parameters<F>, StreamsIn<K>>;
}

/**
 * `void` when the declared type's values fit the property, else the mismatch. Presence is not
 * compared: `@Field({ type, optional: true }) x!: T` is a common way to write an optional field,
 * and a property type cannot tell `x!: T` from a required `x: T`.
 */
export type FieldCheck<S, V> = [S] extends [undefined]
  ? void
  : [ValueOf<S>] extends [V]
    ? void
    : { error: "@Field: the declared type does not fit the property"; declared: ValueOf<S>; property: V };

/** The type a `@Field(…)` argument declares (undefined: none, taken from metadata). */
type FieldSpec<X> = X extends TypeSpec ? X : X extends { readonly type?: infer S } ? S : undefined;

/**
 * `@Field(…)`, typed both ways: standard (TC39: the field's context carries its type) and legacy
 * (the prototype and the key name the property; a private or symbol-named one is not checked).
 */
export interface TypedFieldDecorator<X> {
  <O, K extends keyof O>(target: O, propertyKey: K): FieldCheck<FieldSpec<X>, O[K]>;
  (target: object, propertyKey: string | symbol): void;
  <V>(value: undefined, context: ClassFieldDecoratorContext<unknown, V>): FieldCheck<FieldSpec<X>, V>;
}
