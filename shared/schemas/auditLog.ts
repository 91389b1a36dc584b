import { z } from "zod";
import { AUDIT_ACTIONS } from "../enums.js";
import { FIRST_DAY, isDayInRange, LAST_DAY } from "../localDays.js";
import { time } from "./wire.js";

/** The audit log: an entry as `GET /v1/audit-log` shows it, and the list's filters. */

export const AUDIT_ACTOR_TYPES = ["staff", "key", "donor", "system"] as const;
export type AuditActorType = (typeof AUDIT_ACTOR_TYPES)[number];

export { AUDIT_ACTIONS, type AuditAction } from "../enums.js";

export const AUDIT_SUBJECT_TYPES = [
  "payment",
  "subscription",
  "form",
  "organization",
  "key",
  "webhook",
  "staff_user",
  "ticket",
] as const;
export type AuditSubjectType = (typeof AUDIT_SUBJECT_TYPES)[number];

const values = (description: string) => z.record(z.string(), z.unknown()).meta({ description });

export const auditEntrySchema = z.object({
  id: z.string().meta({ description: "`aud_…`; entries sort by it within the same second" }),
  createdAt: time("When it was done"),
  actor: z
    .object({
      type: z.enum(AUDIT_ACTOR_TYPES).meta({
        description:
          "staff: a signed-in staff member; key: an API key; donor: a donor in the donor portal or on the payment-method update page; system: the billing worker or the command line",
      }),
      id: z.string().meta({
        description:
          "staff: the person's user id (`usr_…`); key: the key's id (`key_…`); donor: their e-mail address; system: `system`",
      }),
      label: z.string().nullable().meta({
        description:
          "How to show the actor: a staff member's or donor's e-mail address as it was then (kept after the person is removed); null for keys and the system",
      }),
    })
    .meta({ description: "Who did it" }),
  action: z.enum(AUDIT_ACTIONS).meta({ description: "What was done" }),
  subject: z
    .object({
      type: z.enum(AUDIT_SUBJECT_TYPES),
      id: z.string().meta({ description: "The record's id (`pay_…`, `sub_…`, a form's UUID, `org_…`, …)" }),
    })
    .meta({ description: "What it was done to" }),
  before: values(
    "The changed fields' values before, as the API shows the record (amounts in major units); {} for a creation or an event such as a sign-in",
  ),
  after: values(
    "The changed fields' values after. A value longer than 1,000 characters as JSON is kept as a note of its size. Never a secret (API keys, webhook signing secrets, passwords)",
  ),
});
export type AuditEntryOut = z.infer<typeof auditEntrySchema>;

/** A day written `YYYY-MM-DD`, of the organization's time zone. */
const day = (description: string) =>
  z
    .string()
    .meta({ format: "date", description })
    .optional()
    .check(
      z.superRefine((raw, ctx) => {
        if (raw !== undefined && !isDayInRange(raw))
          ctx.addIssue({
            code: "custom",
            message: `must be a date written YYYY-MM-DD, from ${FIRST_DAY} to ${LAST_DAY}`,
          });
      }),
    );

/** The filters of `GET /v1/audit-log`, all optional and all combined (the page's own are added to them). */
export const auditLogFilterShape = {
  actorType: z.enum(AUDIT_ACTOR_TYPES).optional().meta({ description: "Only entries of this kind of actor" }),
  actor: z.string().min(1).max(320).optional().meta({
    description:
      "Only entries of this actor: a user id (`usr_…`), a key id (`key_…`), a donor's e-mail address (as given, in lower case) or `system`",
  }),
  action: z.enum(AUDIT_ACTIONS).optional().meta({ description: "Only entries of this action" }),
  subjectType: z
    .enum(AUDIT_SUBJECT_TYPES)
    .optional()
    .meta({ description: "Only entries about this kind of record" }),
  subjectId: z.string().min(1).max(200).optional().meta({ description: "Only entries about this record" }),
  from: day("Entries on or after this day, in the organization's time zone"),
  to: day("Entries on or before this day, in the organization's time zone"),
};
