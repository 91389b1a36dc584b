import { rebuildPhoneKeys } from "./025-phone-digit-keys.js";
import type { Migration } from "./shared.js";

/**
 * A valid phone is matched by its number alone (E.164, with and without its `+`), no longer by the digits
 * as typed, which national numbers of different countries share (French `06 12 34 56 78`, Dutch
 * `06 12345678`): the keys are made again by that rule.
 */
export const phoneKeysByNumber: Migration = {
  version: 27,
  name: "valid contact phones matched by their number, not by their national digits",
  up: rebuildPhoneKeys,
};
