import bidiFactory, { type EmbeddingLevels } from "bidi-js";
import type { Face } from "./fonts.js";

/**
 * Lines of text in visual order, for pdfkit, which has no bidirectional algorithm. A paragraph's embedding
 * levels come from bidi-js (the Unicode Bidirectional Algorithm, in the document's direction), it is
 * broken into lines at spaces, and each line is cut into runs of one level and one face, ordered left to
 * right. Arabic must reach the shaper in logical order to join its letters, and fontkit lays out a run
 * whose first letter is of a right-to-left script reversed; so a run goes to it as it is when that gives
 * the run's direction, else reversed (digits in an Arabic run, brackets between Arabic words).
 */

export type Direction = "ltr" | "rtl";

/** One call of pdfkit's text(): `text` as the shaper is given it, in one face. */
export interface Run {
  text: string;
  face: Face;
}

const bidi = bidiFactory();

/** The explicit bidirectional marks and embeddings: they order the text, and are not drawn. */
const BIDI_CONTROL = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
const BIDI_CONTROLS = new RegExp(BIDI_CONTROL.source, "gu");

/** fontkit's scripts written right to left (its layout reverses a run whose first letter is one). */
const RTL_SCRIPT =
  /[\p{Script=Arabic}\p{Script=Hebrew}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Cypriot}\p{Script=Kharoshthi}\p{Script=Phoenician}\p{Script=Nko}\p{Script=Lydian}\p{Script=Avestan}\p{Script=Imperial_Aramaic}\p{Script=Inscriptional_Pahlavi}\p{Script=Inscriptional_Parthian}\p{Script=Old_South_Arabian}\p{Script=Old_Turkic}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Meroitic_Cursive}\p{Script=Meroitic_Hieroglyphs}\p{Script=Manichaean}\p{Script=Mende_Kikakui}\p{Script=Nabataean}\p{Script=Old_North_Arabian}\p{Script=Palmyrene}\p{Script=Psalter_Pahlavi}]/u;
const LETTER_OF_A_SCRIPT = /[^\p{Script=Common}\p{Script=Inherited}\p{Script=Unknown}]/u;

/** `text` without the bidirectional controls (the standard fonts cannot write them). */
export const withoutBidiControls = (text: string): string => text.replace(BIDI_CONTROLS, "");

/**
 * `text` set apart, each line, as a bidirectional isolate (first strong isolate … pop): data (a name, an
 * address, an id) keeps its own direction inside a sentence or a document of the other.
 */
export const isolate = (text: string): string =>
  text
    .split("\n")
    .map((line) => `\u2068${line}\u2069`)
    .join("\n");

export function embeddingLevels(text: string, direction: Direction): EmbeddingLevels {
  return bidi.getEmbeddingLevels(text, direction);
}

/** Whether fontkit lays `text` out right to left (the script of its first letter that has one). */
export function shaperReverses(text: string): boolean {
  const letter = LETTER_OF_A_SCRIPT.exec(text)?.[0];
  return letter !== undefined && RTL_SCRIPT.test(letter);
}

/**
 * Where `text` (one paragraph, no line feed) breaks into lines no wider than `width`: [start, end) of
 * each, at spaces (not no-break ones), trailing spaces left out; a word wider than a line is cut between
 * characters.
 */
export function breakLines(
  text: string,
  width: number,
  measure: (start: number, end: number) => number,
): [number, number][] {
  const lines: [number, number][] = [];
  if (measure(0, text.length) <= width) return [[0, text.replace(/[ \t]+$/, "").length]];
  let start = 0;
  let end = 0;
  for (const word of text.matchAll(/[^ \t]+/g)) {
    const wordEnd = word.index + word[0].length;
    if (end > start && measure(start, wordEnd) > width) {
      lines.push([start, end]);
      start = word.index;
    }
    if (measure(start, wordEnd) > width) start = cutWord(text, start, wordEnd, width, measure, lines);
    end = wordEnd;
  }
  lines.push([start, end]);
  return lines;
}

/** Pushes the full lines of an over-long word starting at `start`; answers where its last line starts. */
function cutWord(
  text: string,
  start: number,
  wordEnd: number,
  width: number,
  measure: (start: number, end: number) => number,
  lines: [number, number][],
): number {
  let from = start;
  let at = start;
  while (at < wordEnd) {
    const next = at + String.fromCodePoint(text.codePointAt(at) ?? 0).length;
    if (at > from && measure(from, next) > width) {
      lines.push([from, at]);
      from = at;
    }
    at = next;
  }
  return from;
}

/** [start, end) of each stretch of `text` in one face, in logical order. */
export function faceStretches(faces: Face[], start: number, end: number): [number, number][] {
  const stretches: [number, number][] = [];
  for (let i = start; i < end; i++) {
    const last = stretches.at(-1);
    if (last && faces[last[0]] === faces[i]) last[1] = i + 1;
    else stretches.push([i, i + 1]);
  }
  return stretches;
}

/** The text of [start, end) without bidirectional controls, mirrored (brackets) where right to left. */
export function drawnText(text: string, levels: Uint8Array, start: number, end: number): string {
  let out = "";
  for (let i = start; i < end; ) {
    const char = String.fromCodePoint(text.codePointAt(i) ?? 0);
    if (!BIDI_CONTROL.test(char))
      out += levels[i] % 2 === 1 ? (bidi.getMirroredCharacter(char) ?? char) : char;
    i += char.length;
  }
  return out;
}

/** The runs of the line [start, end) of `text`, left to right. */
export function visualRuns(
  text: string,
  levels: EmbeddingLevels,
  faces: Face[],
  start: number,
  end: number,
): Run[] {
  if (end <= start) return [];
  // bidi-js answers the indices of the whole text, the line's reordered in place.
  const order = bidi.getReorderedIndices(text, levels, start, end - 1).slice(start, end);
  const runs: Run[] = [];
  let first = 0;
  while (first < order.length) {
    let last = first;
    while (last + 1 < order.length && continues(order[last], order[last + 1], levels.levels, faces)) last++;
    const from = Math.min(order[first], order[last]);
    const run = runText(text, levels.levels, from, Math.max(order[first], order[last]) + 1);
    if (run) runs.push({ text: run, face: faces[from] });
    first = last + 1;
  }
  return runs;
}

/** Whether the character at visual position `next` belongs to the run of the one at `previous`. */
function continues(previous: number, next: number, levels: Uint8Array, faces: Face[]): boolean {
  const step = levels[previous] % 2 === 1 ? -1 : 1;
  return next === previous + step && levels[next] === levels[previous] && faces[next] === faces[previous];
}

/** A run's text as the shaper must get it to draw [start, end) in its direction. */
function runText(text: string, levels: Uint8Array, start: number, end: number): string {
  const drawn = drawnText(text, levels, start, end);
  const rtl = levels[start] % 2 === 1;
  return rtl === shaperReverses(drawn) ? drawn : Array.from(drawn).reverse().join("");
}
