import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { create, type Font } from "fontkit";
import { describe, expect, it } from "vitest";
import { faces, facesOf, standardFontWrites } from "../../server/documents/fonts.js";
import { isolate, renderPdf, text } from "../../server/documents/pdf.js";
import {
  breakLines,
  embeddingLevels,
  shaperReverses,
  visualRuns,
} from "../../server/documents/textLayout.js";
import { woffToSfnt } from "../../server/documents/woff.js";
import { pdfLines } from "../support/pdfText.js";

/** The pieces of the documents' text layout: fonts, line breaks, visual order, the WOFF unwrapping. */

const info = (direction: "ltr" | "rtl") => ({ title: "t", author: "a", createdAt: new Date(0), direction });

describe("documents' text layout", () => {
  it("breaks a paragraph at spaces into lines that fit, cutting only a word longer than a line", () => {
    const byLength = (s: number, e: number) => e - s;
    expect(breakLines("one two three", 20, byLength)).toEqual([[0, 13]]);
    expect(breakLines("one two three  ", 9, byLength)).toEqual([
      [0, 7],
      [8, 13],
    ]);
    expect(breakLines("abcdefghij xy", 4, byLength)).toEqual([
      [0, 4],
      [4, 8],
      [8, 10],
      [11, 13],
    ]);
    expect(breakLines("", 10, byLength)).toEqual([[0, 0]]);
    // Not at a no-break space (Intl puts one between an amount and its currency).
    expect(breakLines("12\u00a0US$ x", 7, byLength)).toEqual([
      [0, 6],
      [7, 8],
    ]);
  });

  it("orders a right-to-left line's runs from the left, Arabic given to the shaper in reading order", () => {
    const line = `الرقم: ${isolate("12-3")} (نعم)`;
    const runs = visualRuns(line, embeddingLevels(line, "rtl"), facesOf(line, faces(400)), 0, line.length);
    const texts = runs.map((r) => r.text);
    // Left to right: the bracketed word (the line's end), the number, the colon, the first word.
    expect(texts.indexOf("نعم")).toBeLessThan(texts.indexOf("12-3"));
    expect(texts.indexOf("12-3")).toBeLessThan(texts.indexOf("الرقم"));
    expect(runs.find((r) => r.text === "الرقم")?.face.name).toBe("ibm-plex-sans-arabic-arabic-400");
    expect(runs.find((r) => r.text === "12-3")?.face.name).toBe("ibm-plex-sans-latin-400");
    // fontkit reverses the Arabic runs itself; the others reach it already in the order they are drawn.
    expect(shaperReverses("الرقم")).toBe(true);
    expect(shaperReverses("12-3")).toBe(false);
  });

  it("wraps a long right-to-left paragraph: its first words on the first line, each line at the right", async () => {
    const words = "المبلغ القابل للخصم هو ما دفعته مطروحًا منه القيمة السوقية لما حصلت عليه في المقابل";
    const paragraph = [words, words, words, words].join(" و ");
    const pdf = await renderPdf(info("rtl"), (doc) => text(doc, paragraph));
    const lines = pdfLines(pdf, "rtl");
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.map((l) => l.text).join(" ")).toBe(paragraph);
    expect(lines[0].text.startsWith("المبلغ القابل")).toBe(true);
    for (const line of lines) expect(line.end).toBeCloseTo(612 - 54, 0);
    expect(lines[1].y).toBeLessThan(lines[0].y);
  });

  it("keeps each letter's text in a document that follows one that embedded glyphs built from it", async () => {
    // Subsetting "تاريخ" reads the parts of its composite glyphs; a font shared by documents would
    // remember those parts without their letters.
    await renderPdf(info("rtl"), (doc) => text(doc, "التاريخ خ خ"));
    const pdf = await renderPdf(info("ltr"), (doc) => text(doc, "محمد"));
    expect(pdfLines(pdf)[0].text).toBe("محمد");
  });

  it("chooses Helvetica only for what Windows-1252 writes", () => {
    expect(standardFontWrites("Café “déjà” — 1 234,50 €")).toBe(true);
    expect(standardFontWrites("Иван")).toBe(false);
    expect(standardFontWrites("1\u202f234,50\u00a0€")).toBe(false);
  });

  it("unwraps each WOFF file into a TrueType file fontkit reads as it reads the WOFF", () => {
    const resolve = createRequire(import.meta.url).resolve;
    for (const [pkg, file] of [
      ["@fontsource/ibm-plex-sans", "ibm-plex-sans-cyrillic-400-normal.woff"],
      ["@fontsource/ibm-plex-sans-arabic", "ibm-plex-sans-arabic-arabic-700-normal.woff"],
    ]) {
      const woff = readFileSync(resolve(`${pkg}/files/${file}`));
      const [fromWoff, fromSfnt] = [create(woff), create(woffToSfnt(woff))] as Font[];
      expect(fromSfnt.type).toBe("TTF");
      expect(fromSfnt.numGlyphs).toBe(fromWoff.numGlyphs);
      expect(fromSfnt.characterSet).toEqual(fromWoff.characterSet);
      expect(fromSfnt.postscriptName).toBe(fromWoff.postscriptName);
    }
    // The Cyrillic file's space is its last glyph, empty: read from the WOFF it throws in fontkit.
    const cyrillic = faces(400).find((f) => f.name === "ibm-plex-sans-cyrillic-400");
    expect(cyrillic).toBeDefined();
    const font = create(cyrillic?.bytes ?? Buffer.alloc(0)) as Font;
    expect(font.layout("Иван Петров").glyphs).toHaveLength(11);
  });
});
