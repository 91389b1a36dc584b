import { decimalsOf } from "./currency.js";

/**
 * Writing CSV (RFC 4180): fields separated by commas, records ended by CRLF, a field quoted when it holds a
 * comma, a semicolon, a double quote, CR or LF, and its quotes doubled. Text that a spreadsheet would run as a formula
 * (it begins with `=`, `+`, `-`, `@`, a tab or a carriage return) is written with a leading `'`, which
 * spreadsheets show as text; numbers this server writes itself (amounts, counts) are written as they are,
 * a negative one included.
 */

/** A number written as it is, e.g. an amount as a decimal in its currency (`25.50`, `-3.00`, `1000`). */
export class CsvNumber {
  constructor(readonly text: string) {}
}

/** A cell: text (neutralised and quoted as needed), a number of ours, a boolean, or empty. */
export type CsvCell = string | number | boolean | CsvNumber | null | undefined;

export interface CsvColumn<Row> {
  header: string;
  value: (row: Row) => CsvCell;
}

/** UTF-8's byte order mark: Excel reads a CSV file as UTF-8 only when it begins with one. */
export const UTF8_BOM = "\uFEFF";

const FORMULA_START = /^[=+\-@\t\r]/;
// A semicolon too: spreadsheets in locales whose list separator is `;` (German, French, Spanish Excel) split
// an opened .csv on it, and "Ann;=1+1" would make a cell that begins with `=`; quoted, it stays one cell.
const NEEDS_QUOTES = /[",;\r\n]/;

/** One field as RFC 4180 writes it. */
export function csvField(cell: CsvCell): string {
  if (cell === null || cell === undefined) return "";
  if (cell instanceof CsvNumber) return cell.text;
  if (typeof cell === "number") return Number.isFinite(cell) ? String(cell) : "";
  if (typeof cell === "boolean") return cell ? "true" : "false";
  const text = FORMULA_START.test(cell) ? `'${cell}` : cell;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** One record, CRLF included. */
export function csvRecord(cells: CsvCell[]): string {
  return `${cells.map(csvField).join(",")}\r\n`;
}

/** The header record of a set of columns (headers are text like any other). */
export function csvHeader<Row>(columns: CsvColumn<Row>[]): string {
  return csvRecord(columns.map((c) => c.header));
}

/** The records of rows under a set of columns. */
export function csvRows<Row>(columns: CsvColumn<Row>[], rows: Row[]): string {
  let out = "";
  for (const row of rows) out += csvRecord(columns.map((c) => c.value(row)));
  return out;
}

/** An amount in hundredths as a decimal of its currency: `2550` USD → `25.50`, `100000` JPY → `1000`. */
export function csvMoney(cents: number, currency: string): CsvNumber {
  return new CsvNumber((cents / 100).toFixed(decimalsOf(currency)));
}
