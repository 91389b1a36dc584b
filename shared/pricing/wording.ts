/** How pricing errors name what they got and count what is left. */

/** An input value as an error message shows it: JSON for a scalar, its kind for an object or array. */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : JSON.stringify(value);
}

export function plural(n: number, one: string, many: string): string {
  return n === 1 ? one : many;
}
