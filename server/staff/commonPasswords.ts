import { dictionary } from "@zxcvbn-ts/language-common";
import { PASSWORD_MIN_LENGTH } from "../../shared/schemas/staff.js";

/**
 * The common-password list staff passwords are checked against: the zxcvbn-ts project's list of the most
 * used passwords (about 49,000, lower case). Only those long enough to be accepted at all are kept, and a
 * password is compared in lower case, so `QwertyUiop12` is refused as `qwertyuiop12` is.
 */

let common: ReadonlySet<string> | undefined;

function list(): ReadonlySet<string> {
  common ??= new Set(
    dictionary["passwords-common"]
      .filter((word) => word.length >= PASSWORD_MIN_LENGTH)
      .map((word) => word.toLowerCase()),
  );
  return common;
}

export function isCommonPassword(password: string): boolean {
  return list().has(password.toLowerCase());
}

/** The 400 detail line of a refused common password. */
export const COMMON_PASSWORD_PROBLEM =
  "password: is one of the most commonly used passwords, which are tried first by anyone guessing: choose another";
