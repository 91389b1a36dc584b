import { z } from "zod";
import { ApiError } from "../errors.js";
import { sha256Hex } from "../ids.js";

/**
 * The cursor pagination every list shares. A cursor is base64url JSON of a keyset position
 * (sort value and id) bound to one list and one merchant, so deep pages cost what the first does and
 * records inserted meanwhile are neither repeated nor skipped.
 */

export interface KeysetPosition {
  sort: string;
  id: string;
}

/**
 * A cursor's seal: binds its position to its list and merchant, so that a cursor of another list, or one
 * whose position was changed (cut short, edited), is refused instead of ending or restarting the list.
 */
function seal(list: string, organizationId: string, position: KeysetPosition): string {
  return sha256Hex(JSON.stringify([list, organizationId, position.sort, position.id])).slice(0, 16);
}

export function encodeCursor(list: string, organizationId: string, position: KeysetPosition): string {
  return Buffer.from(
    JSON.stringify({ s: seal(list, organizationId, position), k: position.sort, i: position.id }),
  ).toString("base64url");
}

/** The parts of a cursor, or null when the text is not one this server could have written. */
function parseCursor(cursor: string): { s: string; k: string; i: string } | null {
  if (!CURSOR_PATTERN.test(cursor)) return null;
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return null;
  }
  const v = value as { s?: unknown; k?: unknown; i?: unknown } | null;
  if (
    !v ||
    typeof v !== "object" ||
    typeof v.s !== "string" ||
    typeof v.k !== "string" ||
    typeof v.i !== "string" ||
    // No list's position holds a NUL, which the database would refuse in a comparison.
    v.k.includes("\u0000") ||
    v.i.includes("\u0000")
  )
    return null;
  return { s: v.s, k: v.k, i: v.i };
}

const CURSOR_PATTERN = /^[A-Za-z0-9_-]{1,1000}={0,2}$/;
const NOT_A_CURSOR = "is not a cursor returned by this list";

export function decodeCursor(
  list: string,
  organizationId: string,
  cursor: string,
  param = "lastEvaluatedKey",
): KeysetPosition {
  const parsed = parseCursor(cursor);
  const position = parsed && { sort: parsed.k, id: parsed.i };
  if (!parsed || !position || parsed.s !== seal(list, organizationId, position))
    throw ApiError.validation([`${param} ${NOT_A_CURSOR}`]);
  return position;
}

/**
 * A cursor as a query string. Its form is checked with the other parameters, so that a bad `limit` and a
 * garbled cursor are reported together; whether it belongs to this list is checked when it is decoded.
 */
export function cursorParam() {
  return z
    .string()
    .meta({
      // An empty value is taken as no cursor (the first page), so the document allows it too.
      pattern: `^(?:${CURSOR_PATTERN.source.slice(1, -1)})?$`,
      description:
        "Opaque: the lastEvaluatedKey (or nextCursor) a previous page of this same list returned; empty or absent: the first page",
    })
    .optional()
    .check(
      z.superRefine((raw, ctx) => {
        if (raw !== undefined && raw !== "" && parseCursor(raw) === null)
          ctx.addIssue({ code: "custom", message: NOT_A_CURSOR });
      }),
    );
}

/** `limit` as a query string: a whole number in [1, max]. */
export function limitParam(defaultLimit: number, max: number) {
  return z
    .string()
    .meta({ type: "integer", minimum: 1, maximum: max, default: defaultLimit })
    .optional()
    .check(
      z.superRefine((raw, ctx) => {
        if (raw === undefined) return;
        const n = Number(raw);
        if (!/^\d+$/.test(raw) || n < 1 || n > max)
          ctx.addIssue({ code: "custom", message: `must be a whole number from 1 to ${max}` });
      }),
    )
    .transform((raw) => (raw === undefined ? defaultLimit : Number(raw)));
}

export const paginationQuery = (defaultLimit = 50, max = 100) =>
  z.object({
    limit: limitParam(defaultLimit, max),
    lastEvaluatedKey: cursorParam(),
  });

/** Builds the list envelope from `limit + 1` fetched rows. */
export function page<Row, Item>(
  key: string,
  rows: Row[],
  limit: number,
  toItem: (row: Row) => Item,
  positionOf: (row: Row) => KeysetPosition,
  cursorFor: (position: KeysetPosition) => string,
): Record<string, unknown> {
  const hasMore = rows.length > limit;
  const items = (hasMore ? rows.slice(0, limit) : rows).map(toItem);
  const body: Record<string, unknown> = { [key]: items, count: items.length, hasMore };
  if (hasMore) body.lastEvaluatedKey = cursorFor(positionOf(rows[limit - 1]));
  return body;
}

/** The documented envelope of a paginated list: `{ <key>: [...], count, hasMore, lastEvaluatedKey? }`. */
export function pageSchema<K extends string>(key: K, item: z.ZodType) {
  return z.object({
    [key]: z.array(item),
    count: z.number(),
    hasMore: z.boolean(),
    lastEvaluatedKey: z.string().optional(),
  });
}
