import zlib from "node:zlib";
import bidiFactory from "bidi-js";

/**
 * The text of a PDF written by pdfkit, for tests to read documents back. Each text-drawing call (BT … ET)
 * is decoded: the standard fonts' bytes as Windows-1252, an embedded font's glyph ids through its ToUnicode
 * map. Drawings that continue one another on a line (the runs of one line of server/documents/pdf.ts,
 * each glyph's width read from the font's /W) are joined, and the line, drawn in visual order, is put back
 * in reading order (logicalOrder). `glyphs` keeps the visual order, one entry per glyph, left to right.
 */

export type Direction = "ltr" | "rtl";

export interface PdfLine {
  /** The line in logical (reading) order. */
  text: string;
  /** What each glyph stands for, left to right. */
  glyphs: string[];
  /** The glyphs of each drawing (run) of the line, left to right. */
  runs: string[][];
  /** Where the line starts and ends (PDF points from the left) and its baseline (from the bottom). */
  x: number;
  end: number;
  y: number;
}

export interface PdfFont {
  /** The resource name the content uses (F1…). */
  id: string;
  baseFont: string;
  /** Glyph id → the text it stands for (embedded fonts). */
  toUnicode: Map<number, string>;
}

/** The text, one line per drawn line, in logical order. */
export function pdfText(pdf: Buffer | Uint8Array, direction: Direction = "ltr"): string {
  return pdfLines(pdf, direction)
    .map((line) => line.text)
    .join("\n");
}

export function pdfLines(pdf: Buffer | Uint8Array, direction: Direction = "ltr"): PdfLine[] {
  const objects = readObjects(Buffer.from(pdf));
  const fonts = readFonts(objects);
  const lines: PdfLine[] = [];
  for (const content of contentStreams(objects))
    for (const drawing of drawings(content, fonts)) {
      const last = lines.at(-1);
      if (last && continuesLine(last, drawing)) {
        last.glyphs.push(...drawing.glyphs);
        last.runs.push(drawing.glyphs);
        last.end = drawing.end;
      } else lines.push({ ...drawing, glyphs: [...drawing.glyphs], runs: [drawing.glyphs] });
    }
  for (const line of lines) line.text = logicalOrder(line.runs, direction);
  return lines;
}

/** The fonts of the document, by resource name. */
export function pdfFonts(pdf: Buffer | Uint8Array): PdfFont[] {
  return [...readFonts(readObjects(Buffer.from(pdf))).values()].map(({ id, baseFont, toUnicode }) => ({
    id,
    baseFont,
    toUnicode,
  }));
}

interface PdfObject {
  dict: string;
  stream?: Buffer;
}

interface FontInfo extends PdfFont {
  /** Glyph widths in thousandths of the size (embedded fonts); null for a standard font. */
  widths: Map<number, number> | null;
}

type Drawing = Omit<PdfLine, "runs">;

function readObjects(pdf: Buffer): Map<number, PdfObject> {
  const raw = pdf.toString("latin1");
  const objects = new Map<number, PdfObject>();
  for (const match of raw.matchAll(/(\d+) 0 obj\s*/g)) {
    const start = match.index + match[0].length;
    const body = raw.slice(start, raw.indexOf("endobj", start));
    const streamAt = body.search(/stream\r?\n/);
    if (streamAt < 0) {
      objects.set(Number(match[1]), { dict: body });
      continue;
    }
    const dict = body.slice(0, streamAt);
    const dataStart = start + streamAt + (body.slice(streamAt).match(/^stream\r?\n/)?.[0].length ?? 0);
    const length = Number(dict.match(/\/Length (\d+)/)?.[1] ?? 0);
    const data = pdf.subarray(dataStart, dataStart + length);
    objects.set(Number(match[1]), {
      dict,
      stream: dict.includes("/FlateDecode") ? zlib.inflateSync(data) : Buffer.from(data),
    });
  }
  return objects;
}

const ref = (dict: string, key: string): number | undefined => {
  const found = dict.match(new RegExp(`/${key} (\\d+) 0 R`))?.[1];
  return found === undefined ? undefined : Number(found);
};

function readFonts(objects: Map<number, PdfObject>): Map<string, FontInfo> {
  const fonts = new Map<string, FontInfo>();
  for (const { dict } of objects.values())
    for (const section of dict.matchAll(/\/Font <<([^>]*)>>/g))
      for (const [, id, num] of section[1].matchAll(/\/(F\d+) (\d+) 0 R/g))
        if (!fonts.has(id)) fonts.set(id, readFont(id, objects, Number(num)));
  return fonts;
}

function readFont(id: string, objects: Map<number, PdfObject>, num: number): FontInfo {
  const dict = objects.get(num)?.dict ?? "";
  const baseFont = dict.match(/\/BaseFont \/(\S+)/)?.[1] ?? "";
  const cmap = ref(dict, "ToUnicode");
  const descendant = Number(dict.match(/\/DescendantFonts \[(\d+) 0 R\]/)?.[1]);
  if (cmap === undefined) return { id, baseFont, toUnicode: new Map(), widths: null };
  return {
    id,
    baseFont,
    toUnicode: parseToUnicode(objects.get(cmap)?.stream?.toString("latin1") ?? ""),
    widths: parseWidths(objects.get(descendant)?.dict ?? ""),
  };
}

const hexText = (hex: string): string =>
  Buffer.from(hex.replace(/\s/g, ""), "hex").swap16().toString("utf16le");

/** A ToUnicode CMap's bfchar and bfrange entries (as pdfkit writes them: arrays of hex strings). */
function parseToUnicode(cmap: string): Map<number, string> {
  const map = new Map<number, string>();
  for (const [, body] of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g))
    for (const [, code, text] of body.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F\s]*)>/g))
      map.set(Number.parseInt(code, 16), hexText(text));
  for (const [, body] of cmap.matchAll(/beginbfrange([\s\S]*?)endbfrange/g))
    for (const [, first, , list] of body.matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]+)>\s*\[([^\]]*)\]/g))
      [...list.matchAll(/<([0-9a-fA-F\s]*)>/g)].forEach(([, text], i) => {
        map.set(Number.parseInt(first, 16) + i, hexText(text));
      });
  return map;
}

/** A CIDFont's /W [first [w w …] …] widths. */
function parseWidths(dict: string): Map<number, number> {
  const widths = new Map<number, number>();
  for (const [, first, list] of dict.matchAll(/(\d+) \[([\d.\s]*)\]/g))
    list
      .trim()
      .split(/\s+/)
      .forEach((w, i) => {
        widths.set(Number(first) + i, Number(w));
      });
  return widths;
}

function contentStreams(objects: Map<number, PdfObject>): string[] {
  return [...objects.values()]
    .filter((o) => o.dict.includes("/Type /Page\n") || o.dict.includes("/Type /Page\r"))
    .map((page) => ref(page.dict, "Contents"))
    .map((num) => objects.get(num ?? -1)?.stream?.toString("latin1") ?? "");
}

/** The drawings of a content stream as pdfkit writes them: one operator a line. */
function drawings(content: string, fonts: Map<string, FontInfo>): Drawing[] {
  const out: Drawing[] = [];
  let current: Drawing | undefined;
  let font: FontInfo | undefined;
  let size = 0;
  let pen = 0;
  for (const line of content.split("\n")) {
    const tm = line.match(/^1 0 0 1 (\S+) (\S+) Tm$/);
    const tf = line.match(/^\/(\S+) (\S+) Tf$/);
    const tj = line.match(/^\[(.*)\] TJ$/);
    if (line === "BT") current = { text: "", glyphs: [], x: Number.NaN, end: Number.NaN, y: Number.NaN };
    else if (tm && current) {
      pen = Number(tm[1]);
      if (Number.isNaN(current.x)) [current.x, current.y] = [pen, Number(tm[2])];
    } else if (tf) [font, size] = [fonts.get(tf[1]), Number(tf[2])];
    else if (tj && current && font) pen = showText(tj[1], font, size, pen, current.glyphs);
    else if (line === "ET" && current) {
      current.end = font?.widths ? pen : Number.NaN;
      out.push(current);
      current = undefined;
    }
  }
  return out;
}

/** Decodes a TJ array into `glyphs`; answers where the pen is after it. */
function showText(array: string, font: FontInfo, size: number, pen: number, glyphs: string[]): number {
  let at = pen;
  for (const [, hex, adjust] of array.matchAll(/<([0-9a-fA-F]*)>|(-?[\d.]+)/g)) {
    if (adjust !== undefined) at -= (Number(adjust) / 1000) * size;
    else if (font.widths) {
      for (const code of hex.match(/.{4}/g) ?? []) {
        const gid = Number.parseInt(code, 16);
        glyphs.push(font.toUnicode.get(gid) ?? "");
        at += ((font.widths.get(gid) ?? 0) / 1000) * size;
      }
    } else glyphs.push(...new TextDecoder("windows-1252").decode(Buffer.from(hex, "hex")));
  }
  return at;
}

/** Whether `next` carries on `line` where it stopped, on its baseline (the runs of one line). */
function continuesLine(line: PdfLine, next: Drawing): boolean {
  return Math.abs(line.y - next.y) < 0.01 && Math.abs(line.end - next.x) < 0.5;
}

const bidi = bidiFactory();
const RTL = /[\p{Script=Arabic}\p{Script=Hebrew}]/u;
const LTR = /[\p{L}\p{N}]/u;

/**
 * A line's runs (left to right) in reading order, for text of two directions, the document's and the
 * other inside it: a run is right to left if it has right-to-left letters, left to right if it has other
 * letters or digits, else (spaces, punctuation) in the document's direction. Neighbouring runs of one
 * direction read together, the right-to-left ones from the right (their glyphs too: a ligature keeps its
 * letters in order, and mirrored glyphs such as brackets read back as written); the groups read in the
 * document's direction.
 */
function logicalOrder(runs: string[][], direction: Direction): string {
  const groups: { rtl: boolean; texts: string[] }[] = [];
  for (const glyphs of runs) {
    const text = glyphs.join("");
    const rtl = RTL.test(text) || (!LTR.test(text) && direction === "rtl");
    const read = rtl ? glyphs.map((g) => bidi.getMirroredCharacter(g) ?? g).toReversed() : glyphs;
    const last = groups.at(-1);
    if (last?.rtl === rtl) last.texts.push(read.join(""));
    else groups.push({ rtl, texts: [read.join("")] });
  }
  const inOrder = groups.map((g) => (g.rtl ? g.texts.toReversed() : g.texts).join(""));
  return (direction === "rtl" ? inOrder.toReversed() : inOrder).join("");
}
