import zlib from "node:zlib";

/**
 * The text of a PDF written with pdfkit's standard fonts, for tests to read documents back: each content
 * stream inflated, each text-showing operator's hex strings decoded (Windows-1252 as Latin-1), one line per
 * operator.
 */
export function pdfText(pdf: Buffer | Uint8Array): string {
  const raw = Buffer.from(pdf).toString("latin1");
  const lines: string[] = [];
  for (const match of raw.matchAll(/stream\r?\n([\s\S]*?)\r?\nendstream/g)) {
    let content: string;
    try {
      content = zlib.inflateSync(Buffer.from(match[1], "latin1")).toString("latin1");
    } catch {
      content = match[1];
    }
    for (const op of content.matchAll(/\[((?:<[0-9a-fA-F]*>|[-\d.\s])*)\]\s*TJ|<([0-9a-fA-F]*)>\s*Tj/g)) {
      const hex =
        op[1] !== undefined ? [...op[1].matchAll(/<([0-9a-fA-F]*)>/g)].map((h) => h[1]).join("") : op[2];
      lines.push(Buffer.from(hex, "hex").toString("latin1"));
    }
  }
  return lines.join("\n");
}
