/**
 * `@JavaClass("org.example.User")`: the Java class a decorated class stands for when it travels
 * in Dubbo's Java serializations (hessian2, fastjson2 JSONB): the name written in class
 * definitions and `@type`, in a wrapper's `argTypes` and in its response `type`.
 */
const JAVA_NAMES = new WeakMap<object, string>();

const JAVA_NAME = /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/;

/** Class decorator naming the Java class of a `@Field`-bearing class. */
export function JavaClass(name: string): ClassDecorator {
  if (typeof name !== "string" || !JAVA_NAME.test(name)) {
    throw new TypeError(`@JavaClass: "${String(name)}" is not a Java class name (like "org.example.User")`);
  }
  return (target) => {
    JAVA_NAMES.set(target, name);
  };
}

/** The Java class name declared with `@JavaClass` (inherited by subclasses), or undefined. */
export function javaClassOf(ctor: object): string | undefined {
  for (let c: object | null = ctor; c && c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    const n = JAVA_NAMES.get(c);
    if (n) return n;
  }
  return undefined;
}
