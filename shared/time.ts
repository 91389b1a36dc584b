/**
 * Times on the wire: ISO 8601 UTC to the second, as `2026-04-15T18:32:00Z`, in every answer. The database
 * keeps milliseconds, which order records created in the same second and back the pagination cursors;
 * only what a response shows is cut to the second.
 */
export function wireTime<T extends string | null>(iso: T): T {
  return (iso === null ? null : iso.replace(/\.\d+Z$/, "Z")) as T;
}

/** A time in milliseconds since the epoch as the database keeps it: ISO 8601 UTC with milliseconds. */
export function isoAt(ms: number): string {
  return new Date(ms).toISOString();
}
