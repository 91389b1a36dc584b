// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what this replaces
const CONTROL_RUNS = /[\u0000-\u001F\u007F-\u009F]+/g;

/** Each run of control characters (C0, DEL, C1: a line break, a tab, a NUL) as one space. */
export function controlsAsSpace(text: string): string {
  return text.replace(CONTROL_RUNS, " ");
}
