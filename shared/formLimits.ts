/**
 * Lengths the form schema (shared/schemas/form.ts) enforces that the dashboard's form editor also states
 * (as `maxlength` and in its hints), in a module without zod so the dashboard can import it.
 */

/** The longest `eventDetails` a form takes, in characters. */
export const EVENT_DETAILS_MAX = 5000;
/** The longest id of a custom question (`customInputs[].id`), in characters. */
export const QUESTION_ID_MAX = 100;
/** The longest form `title`, in characters. */
export const FORM_TITLE_MAX = 200;
