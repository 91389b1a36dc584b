import PDFDocument from "pdfkit";

/**
 * PDF documents with pdfkit (maintained, pure JavaScript, the standard fonts built in): a page with a
 * heading, text and aligned rows. The standard fonts cover Latin alphabets (Windows-1252); letters outside
 * them print as blanks, which the documents accept for now (docs/api.md, "Donor portal").
 */

export type Doc = InstanceType<typeof PDFDocument>;

export interface DocumentInfo {
  title: string;
  author: string;
  /** Fixes the document's dates (tests compare documents byte for byte). */
  createdAt: Date;
}

/** Builds a document with `draw` and resolves with its bytes. */
export function renderPdf(info: DocumentInfo, draw: (doc: Doc) => void): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      size: "LETTER",
      margin: 54,
      info: { Title: info.title, Author: info.author, CreationDate: info.createdAt, ModDate: info.createdAt },
    });
    const chunks: Buffer[] = [];
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
    try {
      draw(doc);
      doc.end();
    } catch (err) {
      reject(err);
    }
  });
}

/** A label and a value on one line, the value right-aligned. */
export function row(doc: Doc, label: string, value: string, opts: { bold?: boolean } = {}): void {
  const y = doc.y;
  const width = doc.page.width - doc.page.margins.left - doc.page.margins.right;
  doc.font(opts.bold ? "Helvetica-Bold" : "Helvetica").fontSize(10);
  doc.text(label, doc.page.margins.left, y, { width: width * 0.7 });
  const after = doc.y;
  doc.text(value, doc.page.margins.left, y, { width, align: "right" });
  doc.y = Math.max(after, doc.y);
  doc.x = doc.page.margins.left;
}

/** A thin rule across the page, with some space around it. */
export function rule(doc: Doc): void {
  doc.moveDown(0.4);
  const y = doc.y;
  doc
    .moveTo(doc.page.margins.left, y)
    .lineTo(doc.page.width - doc.page.margins.right, y)
    .lineWidth(0.5)
    .strokeColor("#999999")
    .stroke();
  doc.moveDown(0.6);
}
