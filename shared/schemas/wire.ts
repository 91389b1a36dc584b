import { z } from "zod";
import { CURRENCIES } from "../currency.js";

/**
 * How records are written on the wire, for the schemas of answers and webhook payloads: ids, times,
 * amounts of money and counts, each with its exact form.
 */

/** Ids made by `ulid()`: a prefix, then 26 characters of Crockford's lower-case base 32. */
export const ulidId = (prefix: string) => z.string().regex(new RegExp(`^${prefix}_[0-9a-hjkmnp-tv-z]{26}$`));

/** ISO 8601 UTC to the second, as the API writes times: `2026-01-31T10:00:00Z`. */
const dateTime = z.iso.datetime({ precision: 0 });
export const time = (description: string) => dateTime.meta({ description: `${description} (ISO 8601, UTC)` });
/** An amount in major units of the record's currency (`25.5` is 25.50 EUR; whole units for JPY). */
export const majorUnits = (description: string) =>
  z.number().meta({ description: `${description} (major units of the record's \`currency\`)` });
export const count = (description: string) => z.int().min(0).meta({ description });
export const currency = z
  .enum(CURRENCIES as [string, ...string[]])
  .meta({ description: "ISO 4217 code: the organization's currency when the gift was made" });
export const uuid = (description: string) => z.uuid().meta({ description });
