import PDFDocument from "pdfkit";
import { faces, facesOf, standardFontWrites, type Weight } from "./fonts.js";
import {
  breakLines,
  type Direction,
  drawnText,
  embeddingLevels,
  faceStretches,
  type Run,
  shaperReverses,
  visualRuns,
  withoutBidiControls,
} from "./textLayout.js";

export { isolate } from "./textLayout.js";

/**
 * PDF documents with pdfkit (maintained, pure JavaScript): a page with a heading, text and aligned rows,
 * left to right or right to left. Text the standard fonts can write in a left-to-right document is
 * Helvetica, laid out by pdfkit as before; any other text is laid out here (textLayout.ts) in the embedded
 * fonts (fonts.ts): its letters shaped, its runs in visual order, aligned to the document's start side.
 * A right-to-left document mirrors its rows: the label on the right, the value on the left. Data inside a
 * document (names, addresses, ids) goes in `isolate`d, so that it keeps its own direction.
 */

export interface Doc {
  pdf: InstanceType<typeof PDFDocument>;
  direction: Direction;
  /** Widths of shaped runs already measured (shaping Arabic is the costly part of a document). */
  widths: Map<string, number>;
}

export interface DocumentInfo {
  title: string;
  author: string;
  /** Fixes the document's dates (tests compare documents byte for byte). */
  createdAt: Date;
  direction: Direction;
}

export interface TextStyle {
  /** Points; 10 unless said. */
  size?: number;
  bold?: boolean;
}

interface Box {
  x: number;
  width: number;
  align: "left" | "right";
}

/**
 * A line of the embedded fonts, in ems: its baseline below its top, and its height. Room for Latin capitals
 * with accents above (0.95 em in Plex) and Arabic's deepest letters below (0.44 em); a standard-font line
 * is 1.16 em with its baseline at 0.72 em.
 */
const LINE = { baseline: 0.9, height: 1.4 };

const weightOf = (style: TextStyle): Weight => (style.bold ? 700 : 400);
const standardFont = (style: TextStyle) => (style.bold ? "Helvetica-Bold" : "Helvetica");

/** Builds a document with `draw` and resolves with its bytes. */
export function renderPdf(info: DocumentInfo, draw: (doc: Doc) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const pdf = new PDFDocument({
      size: "LETTER",
      margin: 54,
      info: { Title: info.title, Author: info.author, CreationDate: info.createdAt, ModDate: info.createdAt },
    });
    // pdfkit embeds a registered face, with the glyphs used, only once text is drawn in it.
    for (const face of [...faces(400), ...faces(700)]) pdf.registerFont(face.name, face.bytes);
    const chunks: Buffer[] = [];
    pdf.on("data", (chunk: Buffer) => chunks.push(chunk));
    pdf.on("end", () => resolve(Buffer.concat(chunks)));
    pdf.on("error", reject);
    try {
      draw({ pdf, direction: info.direction, widths: new Map() });
      pdf.end();
    } catch (err) {
      reject(err);
    }
  });
}

const left = (doc: Doc) => doc.pdf.page.margins.left;
const contentWidth = (doc: Doc) => doc.pdf.page.width - left(doc) - doc.pdf.page.margins.right;
const startSide = (doc: Doc): Box["align"] => (doc.direction === "rtl" ? "right" : "left");

/** A paragraph across the page (line feeds break it), from the document's start side. */
export function text(doc: Doc, value: string, style: TextStyle = {}): void {
  paragraph(doc, value, { x: left(doc), width: contentWidth(doc), align: startSide(doc) }, style);
  doc.pdf.x = left(doc);
}

/** Space of `lines` lines of the current font; with a style, of Helvetica in that style. */
export function gap(doc: Doc, lines: number, style?: TextStyle): void {
  if (style) doc.pdf.font(standardFont(style)).fontSize(style.size ?? 10);
  doc.pdf.moveDown(lines);
}

/** A label and a value on one line: the label from the start side, the value at the other. */
export function row(doc: Doc, label: string, value: string, opts: { bold?: boolean } = {}): void {
  const style = { size: 10, bold: opts.bold };
  keepOnPage(doc, style);
  const y = doc.pdf.y;
  const width = contentWidth(doc);
  const rtl = doc.direction === "rtl";
  paragraph(
    doc,
    label,
    { x: left(doc) + (rtl ? width * 0.3 : 0), width: width * 0.7, align: startSide(doc) },
    style,
  );
  const after = doc.pdf.y;
  doc.pdf.y = y;
  paragraph(doc, value, { x: left(doc), width, align: rtl ? "left" : "right" }, style);
  doc.pdf.y = Math.max(after, doc.pdf.y);
  doc.pdf.x = left(doc);
}

/** A thin rule across the page, with some space around it. */
export function rule(doc: Doc): void {
  const pdf = doc.pdf;
  pdf.moveDown(0.4);
  const y = pdf.y;
  pdf
    .moveTo(left(doc), y)
    .lineTo(pdf.page.width - pdf.page.margins.right, y)
    .lineWidth(0.5)
    .strokeColor("#999999")
    .stroke();
  pdf.moveDown(0.6);
}

/**
 * Characters the embedded fonts have no glyph for, as a PDF writes them instead: the narrow no-break space
 * (French thousands, "F CFA") as a no-break space; the baht sign as the currency's code.
 */
const PDF_SUBSTITUTES: [string, string][] = [
  ["\u202F", "\u00A0"],
  ["\u0E3F", "THB"],
];

function paragraph(doc: Doc, text: string, box: Box, style: TextStyle): void {
  let value = text;
  for (const [from, to] of PDF_SUBSTITUTES) value = value.replaceAll(from, to);
  const size = style.size ?? 10;
  doc.pdf.font(standardFont(style)).fontSize(size);
  const plain = withoutBidiControls(value);
  if (doc.direction === "ltr" && standardFontWrites(plain)) {
    doc.pdf.text(plain, box.x, doc.pdf.y, { width: box.width, align: box.align });
    return;
  }
  for (const line of value.split("\n")) embeddedParagraph(doc, line, box, style);
  // Spaces after it (gap) stay those of the standard font, as between the other paragraphs.
  doc.pdf.font(standardFont(style)).fontSize(size);
}

/** One paragraph (no line feed) in the embedded faces: broken into lines, each drawn in visual order. */
function embeddedParagraph(doc: Doc, line: string, box: Box, style: TextStyle): void {
  const list = faces(weightOf(style));
  const lineFaces = facesOf(line, list);
  const levels = embeddingLevels(line, doc.direction);
  const measure = (start: number, end: number) =>
    faceStretches(lineFaces, start, end).reduce(
      (sum, [from, to]) =>
        sum + widthOf(doc, { text: drawnText(line, levels.levels, from, to), face: lineFaces[from] }, style),
      0,
    );
  for (const [start, end] of breakLines(line, box.width, measure)) {
    drawLine(doc, visualRuns(line, levels, lineFaces, start, end), box, style);
  }
}

/**
 * pdfkit lays text out word by word (each word cached), in order; a run the shaper reverses must be laid
 * out whole, which an empty list of extra features (the defaults still apply) asks it to do.
 */
const shaping = (run: Run) => (shaperReverses(run.text) ? { features: [] } : {});

function widthOf(doc: Doc, run: Run, style: TextStyle): number {
  const size = style.size ?? 10;
  const key = `${run.face.name} ${size} ${run.text}`;
  let width = doc.widths.get(key);
  if (width === undefined) {
    width = doc.pdf.font(run.face.name).fontSize(size).widthOfString(run.text, shaping(run));
    doc.widths.set(key, width);
  }
  return width;
}

/** Draws one line's runs, left to right, from the top of the line at doc.y. */
function drawLine(doc: Doc, runs: Run[], box: Box, style: TextStyle): void {
  const size = style.size ?? 10;
  keepOnPage(doc, style, LINE.height * size);
  const widths = runs.map((run) => widthOf(doc, run, style));
  const total = widths.reduce((sum, w) => sum + w, 0);
  let x = box.align === "right" ? box.x + box.width - total : box.x;
  const top = doc.pdf.y;
  const baseline = top + LINE.baseline * size;
  runs.forEach((run, i) => {
    doc.pdf
      .font(run.face.name)
      .fontSize(size)
      .text(run.text, x, baseline, { lineBreak: false, baseline: "alphabetic", ...shaping(run) });
    x += widths[i];
  });
  doc.pdf.y = top + LINE.height * size;
}

/** Starts a new page if a line (of the standard font in `style`, unless `height` says) would not fit. */
function keepOnPage(doc: Doc, style: TextStyle, height?: number): void {
  const size = style.size ?? 10;
  const needed = height ?? doc.pdf.font(standardFont(style)).fontSize(size).currentLineHeight(true);
  if (doc.pdf.y + needed > doc.pdf.page.maxY()) doc.pdf.addPage();
}
