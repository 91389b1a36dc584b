import { z } from "zod";
import { phoneMatchKeys } from "../../shared/phone.js";
import {
  type ContactFields,
  contactCreateSchema,
  contactSchema,
  contactUpdateSchema,
} from "../../shared/schemas/contact.js";
import { isoAt } from "../../shared/time.js";
import { ApiError } from "../errors.js";
import { isUuid } from "../ids.js";
import {
  type ContactKey,
  type ContactPhone,
  contactTotals,
  createContact,
  findContact,
  listContacts,
  updateContact,
} from "../store/contacts.js";
import type { Db } from "../store/database.js";
import type { ContactFilters } from "../store/listFilters.js";
import type { ContactsTable } from "../store/schema.js";
import { emitEvent } from "../webhooks/events.js";
import { presentContact } from "../wire/contact.js";
import { csvDoc, wantsCsv } from "./csvExport.js";
import type { AppDeps } from "./env.js";
import { exportContacts } from "./exports.js";
import { contactSearchParam, filteredList } from "./listFilters.js";
import { decodeCursor, encodeCursor, page, pageSchema, paginationQuery } from "./pagination.js";
import { type BodyRule, defineRoute, errorSchema, pathId, type RouteSpec, standardErrors } from "./route.js";

/** Contacts. Derived fields come from the donor's payments and subscriptions. */

const idParams = z.object({ id: pathId("The contact's id (UUID)") });
const EMAIL_FILTER_MAX = 254;

const CONTACT_RULES: BodyRule[] = [
  {
    fields: ["emails", "phones"],
    rule: "no email (any case) or phone (as trimmed) twice in one contact",
  },
];

const notFound = { description: "No such contact (or it was deleted or merged)", schema: errorSchema };
const conflict = {
  description: "An email or phone is already on another contact of the organization",
  schema: errorSchema,
};

/** The caller's live contact, or 404 / 403. */
async function loadOwnedContact(db: Db, organizationId: string, id: string): Promise<ContactsTable> {
  const row = isUuid(id) ? await findContact(db, id.toLowerCase()) : undefined;
  if (row?.status !== "ACTIVE") throw new ApiError(404, "Contact not found");
  if (row.organization_id !== organizationId)
    throw new ApiError(403, "Contact belongs to another organization");
  return row;
}

async function present(db: Db, rows: ContactsTable[]) {
  const totals = await contactTotals(
    db,
    rows.map((r) => r.id),
  );
  return new Map(rows.map((r) => [r.id, presentContact(r, totals.get(r.id) ?? emptyTotals)]));
}

const emptyTotals = { count: 0, valueCents: 0, first: null, last: null, activeSubscription: false };

/** The 409 for keys another contact holds, naming the first as the caller typed it. */
function duplicate(
  taken: (ContactKey & { contactId: string })[],
  body: ContactFields,
  phones: ContactPhone[],
): ApiError {
  const first = taken[0];
  const shown =
    first.kind === "email"
      ? (body.emails?.find((e) => e.value.trim().toLowerCase() === first.value_key)?.value ?? first.value_key)
      : (phones.find((p) => phoneMatchKeys(p).includes(first.value_key))?.value ?? first.value_key);
  return new ApiError(409, `A contact with ${first.kind} ${shown} already exists`, undefined, undefined, {
    contactId: first.contactId,
  });
}

export function contactRoutes(deps: AppDeps): RouteSpec[] {
  const db = deps.store.db;
  const tags = ["Contacts"];

  return [
    defineRoute({
      method: "get",
      path: "/v1/contacts",
      operationId: "listContacts",
      permission: "contacts:read",
      tags,
      summary: "List contacts",
      description:
        "Live contacts, newest first (deleted and merged contacts are left out). `limit` defaults to 100. `email` returns the contact whose emails include that address (compared case-insensitively). `search` returns the contacts whose name, organization name or an email address contains it (any case); with `email`, both apply. A `lastEvaluatedKey` pages only the list of the filters it came from: sent with other filters it is a 400.",
      query: paginationQuery(100).extend({
        email: z
          .string()
          .trim()
          .max(EMAIL_FILTER_MAX)
          .regex(/^[^\s@]+@[^\s@]+$/, { message: "must be an email address" })
          .optional()
          .meta({
            description: "An email address; matched case-insensitively against every email of a contact",
          }),
        search: contactSearchParam,
      }),
      responses: {
        200: {
          description: "A page of contacts",
          schema: pageSchema("contacts", contactSchema),
          csv: csvDoc("contact"),
        },
        ...standardErrors,
      },
      handler: async (c, { query }) => {
        const orgId = c.get("auth").organizationId;
        const filters: ContactFilters = {
          ...(query.email !== undefined && { email: query.email }),
          ...(query.search !== undefined && { search: query.search }),
        };
        if (wantsCsv(c)) return exportContacts(c, deps, orgId, filters);
        const list = filteredList(`contacts:${query.email?.toLowerCase() ?? ""}`, { search: query.search });
        const after = query.lastEvaluatedKey ? decodeCursor(list, orgId, query.lastEvaluatedKey) : undefined;
        const rows = await listContacts(db, orgId, filters, query.limit + 1, after);
        const shown = await present(db, rows.slice(0, query.limit));
        return c.json(
          page(
            "contacts",
            rows,
            query.limit,
            (r) => shown.get(r.id),
            (r) => ({ sort: r.created_at, id: r.id }),
            (p) => encodeCursor(list, orgId, p),
          ),
        );
      },
    }),

    defineRoute({
      method: "get",
      path: "/v1/contacts/{id}",
      operationId: "getContact",
      permission: "contacts:read",
      tags,
      summary: "Get a contact",
      params: idParams,
      responses: {
        200: { description: "The contact", schema: contactSchema },
        ...standardErrors,
        404: notFound,
      },
      handler: async (c, { params }) => {
        const row = await loadOwnedContact(db, c.get("auth").organizationId, params.id);
        const shown = await present(db, [row]);
        return c.json(shown.get(row.id));
      },
    }),

    defineRoute({
      method: "post",
      path: "/v1/contacts",
      operationId: "createContact",
      permission: "contacts:write",
      tags,
      summary: "Create a contact",
      description:
        "`firstName` and `lastName` are required. Emails take `value` (or `email`), phones `value`, and every item `isPrimary` (or `is_primary`); the first item is primary when none is marked. `email` and `phone` are shorthands for one primary address. An email (compared case-insensitively) or phone (compared by its E.164 form, read in the country of the contact's primary address when it has one, else the organization's `country`, a number with a leading + as international, and by its digits, so numbers that are not valid match in any format) already on a live contact of the organization is a 409 naming that contact's id in `contactId`. Consents start `UNKNOWN`; they follow the donor's choices at checkout.",
      body: contactCreateSchema,
      rules: CONTACT_RULES,
      responses: {
        201: {
          description: "Created",
          schema: z.object({ contact: contactSchema, message: z.string() }),
        },
        ...standardErrors,
        409: conflict,
      },
      handler: async (c, { body }) => {
        const orgId = c.get("auth").organizationId;
        const nowMs = deps.now();
        const nowIso = isoAt(nowMs);
        const contact = await db.transaction().execute(async (trx) => {
          const { row, taken } = await createContact(
            trx,
            orgId,
            {
              firstName: body.firstName,
              lastName: body.lastName,
              organizationName: body.organizationName ?? null,
              emails: body.emails ?? [],
              phones: body.phones ?? [],
              addresses: body.addresses ?? [],
              emailConsent: "UNKNOWN",
              smsConsent: "UNKNOWN",
              communicationConsent: "UNKNOWN",
            },
            nowIso,
          );
          if (taken.length) throw duplicate(taken, body, JSON.parse(row.phones));
          const shown = presentContact(row, emptyTotals);
          await emitEvent(trx, orgId, "contact.created", row.id, shown, nowMs);
          return shown;
        });
        return c.json({ contact, message: "Contact created successfully" }, 201);
      },
    }),

    ...(["put", "patch"] as const).map((method) =>
      defineRoute({
        method,
        path: "/v1/contacts/{id}",
        operationId: method === "put" ? "updateContact" : "patchContact",
        permission: "contacts:write",
        tags,
        summary: method === "put" ? "Update a contact (partial)" : "Update a contact (partial; same as PUT)",
        description:
          "Only the fields sent change; a list sent (`emails`, `phones`, `addresses`) replaces the stored one. Read-only fields of a GET (`id`, `fullName`, totals, consents, dates) are ignored, so a read can be sent back. Duplicates are a 409 as on create. `PATCH` is accepted too.",
        params: idParams,
        body: contactUpdateSchema,
        rules: CONTACT_RULES,
        responses: {
          200: {
            description: "The updated contact",
            schema: z.object({ contact: contactSchema, message: z.string() }),
          },
          ...standardErrors,
          404: notFound,
          409: conflict,
        },
        handler: (c, input) =>
          update(c.get("auth").organizationId, input.params.id, input.body).then((r) => c.json(r)),
      }),
    ),
  ];

  async function update(orgId: string, id: string, body: ContactFields) {
    await loadOwnedContact(db, orgId, id);
    const nowMs = deps.now();
    const nowIso = isoAt(nowMs);
    const contact = await db.transaction().execute(async (trx) => {
      const result = await updateContact(trx, orgId, id.toLowerCase(), body, nowIso);
      if (!result) throw new ApiError(404, "Contact not found");
      if (result.taken.length) throw duplicate(result.taken, body, JSON.parse(result.row.phones));
      const totals = (await contactTotals(trx, [result.row.id])).get(result.row.id) ?? emptyTotals;
      const shown = presentContact(result.row, totals);
      await emitEvent(trx, orgId, "contact.updated", result.row.id, shown, nowMs);
      return shown;
    });
    return { contact, message: "Contact updated successfully" };
  }
}
