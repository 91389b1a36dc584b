import { dictionary } from "@zxcvbn-ts/language-common";

/**
 * Staff passwords that are guessed first, compared in lower case (`QwertyUiop12` as `qwertyuiop12`):
 * - one of the zxcvbn-ts project's list of the most used passwords (about 49,000), or one of them with
 *   only digits and symbols before or after it (`Password123!`, `2024welcome!!`);
 * - one character, or a short pattern, repeated (`aaaaaaaaaaaa`, `abc123abc123`, `trustno1trustno1`);
 * - a straight run of the alphabet, the digits or a keyboard's rows or columns, either way
 *   (`abcdefghijkl`, `1234567890123`, `qwertyuiopasdf`, `1qaz2wsx3edc`);
 * and the same once the digits and symbols at either end are taken off (`aaaaaa123456`, `abcdef!!!!!!`).
 */

/** The least length of a listed password or a pattern that is looked for inside a longer one. */
const MIN_PART = 3;
/** A listed password of digits and symbols only counts inside a longer one from this length. */
const MIN_PART_WITHOUT_LETTERS = 6;
/** A pattern repeated is refused whatever it is up to this length; a longer one when it is guessable. */
const SHORT_PATTERN = 6;

/** Runs that are typed without thinking, read either way; the alphabet and the digits wrap around. */
const RUNS = [
  "abcdefghijklmnopqrstuvwxyz",
  "0123456789",
  "qwertyuiopasdfghjklzxcvbnm",
  "azertyuiopqsdfghjklmwxcvbn",
  "qwertzuiopasdfghjklyxcvbnm",
  "1qaz2wsx3edc4rfv5tgb6yhn7ujm8ik9ol0p",
  "qazwsxedcrfvtgbyhnujmikolp",
  "!@#$%^&*()",
];

let common: ReadonlySet<string> | undefined;

function list(): ReadonlySet<string> {
  common ??= new Set(dictionary["passwords-common"].map((word) => word.toLowerCase()));
  return common;
}

const reversed = (text: string) => [...text].reverse().join("");

/** Whether `text` is a straight run of one of RUNS, forwards or backwards. */
function isRun(text: string): boolean {
  if (text.length < MIN_PART) return false;
  return RUNS.some((run) => {
    const around = run.repeat(Math.ceil(text.length / run.length) + 1);
    return around.includes(text) || reversed(around).includes(text);
  });
}

/** Whether `text` is one character or a guessable pattern repeated (at least twice, the last may be cut). */
function isRepeated(text: string): boolean {
  const chars = [...text];
  for (let period = 1; period <= chars.length / 2; period++) {
    if (!chars.every((c, i) => i < period || c === chars[i - period])) continue;
    const unit = chars.slice(0, period).join("");
    return period <= SHORT_PATTERN || list().has(unit) || isRun(unit);
  }
  return false;
}

const isLetter = (c: string) => /\p{L}/u.test(c);

/**
 * Whether `chars` is a listed password with only digits and symbols around it (none counts): every way of
 * taking digits and symbols off its ends is looked up.
 */
function isListedWithAffixes(chars: string[]): boolean {
  const n = chars.length;
  const letters = chars.some(isLetter);
  let lead = 0;
  while (lead < n && !isLetter(chars[lead])) lead++;
  let trail = 0;
  while (trail < n && !isLetter(chars[n - 1 - trail])) trail++;
  for (let start = 0; start <= lead; start++)
    for (let cut = 0; cut <= trail && start + cut <= n - MIN_PART; cut++) {
      const part = chars.slice(start, n - cut).join("");
      const whole = start === 0 && cut === 0;
      if (!whole && !letters && part.length < MIN_PART_WITHOUT_LETTERS) continue;
      if (list().has(part)) return true;
    }
  return false;
}

export function isCommonPassword(password: string): boolean {
  const chars = [...password.toLowerCase()];
  if (isListedWithAffixes(chars)) return true;
  const whole = chars.join("");
  if (isRepeated(whole) || isRun(whole)) return true;
  // The same with the digits and symbols at either end taken off.
  let start = 0;
  while (start < chars.length && !isLetter(chars[start])) start++;
  let end = chars.length;
  while (end > start && !isLetter(chars[end - 1])) end--;
  const core = chars.slice(start, end).join("");
  if (core.length < MIN_PART || core === whole) return false;
  return isRepeated(core) || isRun(core);
}
