import type { Context } from "hono";
import { accepts } from "hono/accepts";
import { type CsvColumn, csvHeader, csvRows, UTF8_BOM } from "../../shared/csv.js";
import { localDate, localDateTime } from "../../shared/localDays.js";
import type { AppDeps } from "./env.js";
import { loadCallerOrganization } from "./organization.js";
import type { KeysetPosition } from "./pagination.js";

/**
 * CSV exports of the lists: a list route answers `text/csv` instead of its JSON page when the request's
 * `Accept` prefers it, with every row that matches its filters. Rows are read from the database in keyset
 * batches and written to the response as they come, so an export of any size holds one batch in memory.
 */

/** Rows read from the database per query of an export. */
export const EXPORT_BATCH = 500;

export const CSV_CONTENT_TYPE = "text/csv; charset=utf-8; header=present";

/** Whether the request asks for CSV: `Accept` names `text/csv` (or `text/*`) above JSON. */
export function wantsCsv(c: Context): boolean {
  if (!c.req.header("Accept")) return false;
  return (
    accepts(c, {
      header: "Accept",
      supports: ["application/json", "text/csv"],
      default: "application/json",
    }) === "text/csv"
  );
}

/**
 * Every row after none, batch by batch, newest first: `fetch(after, limit)` is the list's store query
 * (keyset-paged), called until it returns fewer rows than asked for.
 */
export async function* keysetBatches<Row>(
  fetch: (after: KeysetPosition | undefined, limit: number) => Promise<Row[]>,
  positionOf: (row: Row) => KeysetPosition,
  batchSize: number = EXPORT_BATCH,
): AsyncGenerator<Row[]> {
  let after: KeysetPosition | undefined;
  for (;;) {
    const rows = await fetch(after, batchSize);
    if (rows.length > 0) yield rows;
    if (rows.length < batchSize) return;
    after = positionOf(rows[rows.length - 1]);
  }
}

/** Each batch turned into what the columns read (a batch's extra lookups are made once per batch). */
export async function* mapBatches<Row, Item>(
  batches: AsyncIterable<Row[]>,
  map: (rows: Row[]) => Item[] | Promise<Item[]>,
): AsyncGenerator<Item[]> {
  for await (const rows of batches) yield await map(rows);
}

/** A time as the organization reads it: `2026-03-09 23:30:00` in its zone; empty for none. */
export function csvTime(iso: string | null, timeZone: string): string {
  return iso === null ? "" : localDateTime(Date.parse(iso), timeZone).replace("T", " ");
}

/** The header of a time column, naming the zone its times are in: `Date (America/New_York)`. */
export function timeHeader(name: string, timeZone: string): string {
  return `${name} (${timeZone})`;
}

/**
 * The streamed CSV answer: a UTF-8 byte order mark (so that Excel reads the file as UTF-8), the header
 * record, then each batch's records as it is read, named `<name>-<the organization's today>.csv`.
 */
export function csvResponse<Item>(
  c: Context,
  opts: {
    name: string;
    columns: CsvColumn<Item>[];
    batches: AsyncIterable<Item[]>;
    timeZone: string;
    nowMs: number;
  },
): Response {
  const encoder = new TextEncoder();
  const iterator = opts.batches[Symbol.asyncIterator]();
  let headerSent = false;
  const body = new ReadableStream<Uint8Array>(
    {
      async pull(controller) {
        if (!headerSent) {
          headerSent = true;
          controller.enqueue(encoder.encode(UTF8_BOM + csvHeader(opts.columns)));
          return;
        }
        const next = await iterator.next();
        if (next.done) controller.close();
        else controller.enqueue(encoder.encode(csvRows(opts.columns, next.value)));
      },
      async cancel() {
        await iterator.return?.(undefined);
      },
    },
    // Read a batch only when the client has taken the last one.
    { highWaterMark: 0 },
  );
  const filename = `${opts.name}-${localDate(opts.nowMs, opts.timeZone)}.csv`;
  return c.body(body, 200, {
    "Content-Type": CSV_CONTENT_TYPE,
    "Content-Disposition": `attachment; filename="${filename}"`,
    "Cache-Control": "no-store",
  });
}

/**
 * A list's whole export in one call, for a list handler's `if (wantsCsv(c)) return exportList(…)`:
 * `fetch(after, limit)` is the list's keyset store query with the request's filters (newest first, rows
 * after `after`), `present` turns a batch of rows into what the columns read (one lookup per batch), and
 * `columns` are built for the organization (its time zone for time columns, its currency). Rows are
 * positioned by `created_at` and `id` unless `position` says otherwise.
 */
export async function exportList<Row extends { created_at: string; id: string }, Item>(
  c: Context,
  deps: AppDeps,
  organizationId: string,
  opts: {
    name: string;
    fetch: (after: KeysetPosition | undefined, limit: number) => Promise<Row[]>;
    present: (rows: Row[]) => Item[] | Promise<Item[]>;
    columns: (org: { timeZone: string; currency: string }) => CsvColumn<Item>[];
    position?: (row: Row) => KeysetPosition;
  },
): Promise<Response> {
  const org = await loadCallerOrganization(deps, organizationId);
  const position = opts.position ?? ((row: Row) => ({ sort: row.created_at, id: row.id }));
  return csvResponse(c, {
    name: opts.name,
    columns: opts.columns(org),
    batches: mapBatches(keysetBatches(opts.fetch, position), opts.present),
    timeZone: org.timeZone,
    nowMs: deps.now(),
  });
}

/** The OpenAPI text of a list's CSV answer. */
export function csvDoc(what: string): string {
  return `With \`Accept: text/csv\`: every ${what} that matches the filters (not one page: \`limit\` and \`lastEvaluatedKey\` do not narrow it, though a malformed one is still a 400), newest first, as CSV (RFC 4180, UTF-8 with a byte order mark, a header record), streamed, with \`Content-Disposition: attachment; filename="<list>-YYYY-MM-DD.csv"\`. Times are in the organization's time zone (named in the column's header), amounts are decimals in the row's \`Currency\`; text a spreadsheet would run as a formula begins with \`'\`.`;
}
