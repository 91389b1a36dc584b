/**
 * `{ ...base, ...extra }` for plain data objects, without its cost on Node 20: V8 there builds an object
 * literal that spreads an object and then adds properties through a slow path (docs/benchmarks.md).
 * `Object.assign` onto a new object gives the same own properties in the same order.
 */
export function extend<A extends object, B extends object>(base: A, extra: B): Omit<A, keyof B> & B {
  return Object.assign({}, base, extra);
}
