import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { create, type Font, type FontCollection } from "fontkit";
import { woffToSfnt } from "./woff.js";

/**
 * The fonts of the documents. Text the standard PDF fonts can write (Windows-1252) in a left-to-right
 * document stays in Helvetica, which a PDF names without embedding it; anything else is written in IBM
 * Plex Sans (Latin, Cyrillic, Greek, Vietnamese) and IBM Plex Sans Arabic, read from the @fontsource
 * packages in node_modules and embedded by pdfkit with only the glyphs used. Plex Sans Arabic has a glyph
 * for each form of each letter, so a PDF's ToUnicode map says which letter each glyph is (Noto Sans Arabic
 * draws many letters as one dotless shape plus dots, which copy as the wrong letters). Fontsource ships
 * each script of a family as its own file; each character takes the file the character before it used, if
 * that one has it, else the first that has it (so an Arabic phrase stays in one file, its digits go to the
 * Latin one). The WOFF files are read once per process and unwrapped into plain TrueType (woff.ts), which
 * fontkit reads best (pdfkit reads WOFF2 too, but fontkit's subsetter breaks composite glyphs read from
 * it). A character none of them has (Hebrew, CJK, Devanagari…) prints as an empty box.
 */

export type Weight = 400 | 700;

export interface Face {
  /** The name it is registered under in a document. */
  name: string;
  /**
   * The TrueType file, which pdfkit reads anew for each document: fontkit keeps each glyph with the
   * letters of its first use, and subsetting reads the parts of composite glyphs without letters, so a
   * font shared by documents would write some letters of later documents without their text.
   */
  bytes: Buffer;
  has(codePoint: number): boolean;
}

/** The files, in the order a character looks for its glyph: package, family, the family's subsets. */
const FILES: { pkg: string; family: string; subsets: string[] }[] = [
  {
    pkg: "@fontsource/ibm-plex-sans",
    family: "ibm-plex-sans",
    subsets: ["latin", "latin-ext", "cyrillic", "cyrillic-ext", "greek", "vietnamese"],
  },
  { pkg: "@fontsource/ibm-plex-sans-arabic", family: "ibm-plex-sans-arabic", subsets: ["arabic"] },
];

const resolve = createRequire(import.meta.url).resolve;

const isFont = (font: Font | FontCollection): font is Font => "hasGlyphForCodePoint" in font;

function loadFace(pkg: string, family: string, subset: string, weight: Weight): Face {
  const file = `${family}-${subset}-${weight}-normal.woff`;
  const bytes = woffToSfnt(readFileSync(resolve(`${pkg}/files/${file}`)));
  const font = create(bytes);
  if (!isFont(font)) throw new Error(`${file} is a font collection`);
  return {
    name: `${family}-${subset}-${weight}`,
    bytes,
    has: (codePoint) => font.hasGlyphForCodePoint(codePoint),
  };
}

const loaded = new Map<Weight, Face[]>();

/** The embedded faces of a weight, read once per process. */
export function faces(weight: Weight): Face[] {
  let list = loaded.get(weight);
  if (!list) {
    list = FILES.flatMap(({ pkg, family, subsets }) =>
      subsets.map((subset) => loadFace(pkg, family, subset, weight)),
    );
    loaded.set(weight, list);
  }
  return list;
}

/** The face of each UTF-16 unit of `text` (both halves of a surrogate pair get the same). */
export function facesOf(text: string, list: Face[]): Face[] {
  const out: Face[] = [];
  let current: Face | undefined;
  for (const char of text) {
    const codePoint = char.codePointAt(0) ?? 0;
    if (!current?.has(codePoint)) current = list.find((face) => face.has(codePoint)) ?? current ?? list[0];
    for (let i = 0; i < char.length; i++) out.push(current);
  }
  return out;
}

/** Windows-1252 beyond ASCII and Latin-1: what else the standard fonts can write. */
const WIN_ANSI_EXTRA = "€‚ƒ„…†‡ˆ‰Š‹ŒŽ‘’“”•–—˜™š›œžŸ";

/** Whether Helvetica can write every character of `text`. */
export function standardFontWrites(text: string): boolean {
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    const latin = code === 10 || (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff);
    if (!latin && !WIN_ANSI_EXTRA.includes(char)) return false;
  }
  return true;
}
