/** Crockford's base 32, lower case: the alphabet of server/ids.ts. */
const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * The time part of an id made by `ulid()` or `prefixedId()` (with or without its `prefix_`): the first 10
 * characters of the ulid, a 48-bit count of milliseconds.
 */
export function ulidTime(id: string): number {
  const ulid = id.slice(id.indexOf("_") + 1);
  let ms = 0;
  for (const char of ulid.slice(0, 10)) {
    const digit = CROCKFORD.indexOf(char);
    if (digit < 0) throw new Error(`not a ulid: ${id}`);
    ms = ms * 32 + digit;
  }
  return ms;
}
