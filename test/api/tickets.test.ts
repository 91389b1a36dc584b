import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import QRCode from "qrcode";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApp } from "../../server/app.js";
import { composeDeps } from "../../server/compose.js";
import { createTransport } from "../../server/mail/transport.js";
import { MailWorker } from "../../server/mail/worker.js";
import { createStaffMember } from "../../server/staff/accounts.js";
import { createApiKey } from "../../server/store/keys.js";
import type { StaffRole } from "../../shared/schemas/staff.js";
import { TICKET_CODE } from "../../shared/ticketCode.js";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * Event tickets: an event order's payment issues one ticket per ticket bought, each with its
 * own code; the receipt lists each code with its QR image; a refund in full voids them; the door lists,
 * searches and checks them in once (409 with who and when after that), even from two instances at once;
 * who may do what.
 */

type Ticket = {
  id: string;
  code: string;
  formID: string;
  paymentID: string;
  ticketType: string;
  admits: number;
  buyer: { name: string; email: string };
  status: "VALID" | "CHECKED_IN" | "VOID";
  checkedInAt: string | null;
  checkedInBy: string | null;
  voidedAt: string | null;
};
type TicketPage = {
  tickets: Ticket[];
  count: number;
  hasMore: boolean;
  lastEvaluatedKey?: string;
  totals: { tickets: number; checkedIn: number; people: number; peopleAdmitted: number };
};

describe(`event tickets (${dialect})`, () => {
  let t: TestApp;
  let mailDir: string;
  let worker: MailWorker;
  const ORIGIN = "http://forms.test";
  const PASSWORD = "correct horse battery staple";

  beforeAll(async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
    mailDir = fs.mkdtempSync(path.join(os.tmpdir(), "almoner-tickets-mail-"));
    const transport = createTransport({ dataDir: mailDir, publicUrl: t.config.publicUrl });
    worker = new MailWorker({ store: t.store, transport, now: Date.now });
  });
  afterAll(async () => {
    await worker.stop();
    await t.close();
    fs.rmSync(mailDir, { recursive: true, force: true });
  });

  /** An event form (Adult $50, Table of 8 $400) and one order of 2 Adult + 1 Table on it. */
  async function eventOrder(email = `buyer-${Math.random().toString(36).slice(2, 8)}@example.org`) {
    const formId = await createForm(t, validForms.event());
    const paymentId = await buy(formId, email, [
      { name: "Adult", quantity: 2 },
      { name: "Table", quantity: 1 },
    ]);
    return { formId, paymentId, email };
  }

  async function buy(
    formId: string,
    email: string,
    tickets: { name: string; quantity: number }[],
    headers: Record<string, string> = {},
  ): Promise<string> {
    const res = await checkout(
      t,
      formId,
      { tickets, donor: { ...donor(email), firstName: "Grace", lastName: "Hopper" }, paymentMethod: card() },
      headers,
    );
    expect(res.status, res.text).toBe(201);
    return (res.body.payment as { paymentID: string }).paymentID;
  }

  const list = (formId: string, query = "", key?: string) =>
    t.request<TicketPage>("GET", `/v1/forms/${formId}/tickets${query}`, key ? { key } : {});
  const checkIn = (formId: string, code: string, opts: { key?: string } = {}) =>
    t.request<Ticket & Record<string, unknown>>("POST", `/v1/forms/${formId}/tickets/${code}/check-in`, opts);
  const undo = (formId: string, code: string) =>
    t.request<Ticket & Record<string, unknown>>("DELETE", `/v1/forms/${formId}/tickets/${code}/check-in`);

  it("issues one ticket per ticket bought, a GROUP ticket admitting its group, each with its own code", async () => {
    const { formId, paymentId, email } = await eventOrder();
    const res = await list(formId);
    expect(res.status, res.text).toBe(200);
    const tickets = res.body.tickets;
    expect(tickets).toHaveLength(3);
    expect(tickets.map((x) => [x.ticketType, x.admits]).sort()).toEqual([
      ["Adult", 1],
      ["Adult", 1],
      ["Table", 8],
    ]);
    for (const x of tickets) {
      expect(x.code).toMatch(TICKET_CODE);
      expect(x).toMatchObject({
        formID: formId,
        paymentID: paymentId,
        buyer: { name: "Grace Hopper", email },
        status: "VALID",
        checkedInAt: null,
        checkedInBy: null,
        voidedAt: null,
      });
    }
    expect(new Set(tickets.map((x) => x.code)).size).toBe(3);
    expect(res.body.totals).toEqual({ tickets: 3, checkedIn: 0, people: 10, peopleAdmitted: 0 });
  });

  it("a checkout repeated with its Idempotency-Key issues its tickets once", async () => {
    const formId = await createForm(t, validForms.event());
    const headers = { "Idempotency-Key": `order-${Math.random()}` };
    const tickets = [{ name: "Adult", quantity: 2 }];
    const first = await buy(formId, "twice@example.org", tickets, headers);
    const second = await buy(formId, "twice@example.org", tickets, headers);
    expect(second).toBe(first);
    expect((await list(formId)).body.tickets).toHaveLength(2);
  });

  it("a gift on a form without tickets issues none", async () => {
    const formId = await createForm(t, validForms.standard());
    const res = await checkout(t, formId, { amount: 25, donor: donor(), paymentMethod: card() });
    expect(res.status).toBe(201);
    const rows = await t.store.db.selectFrom("tickets").selectAll().where("form_id", "=", formId).execute();
    expect(rows).toEqual([]);
  });

  it("the receipt lists each ticket's code with its QR code as an inline PNG image", async () => {
    const { formId, email } = await eventOrder();
    const codes = (await list(formId)).body.tickets.map((x) => x.code);
    await worker.runOnce();
    const files = fs.readdirSync(path.join(mailDir, "mail")).filter((n) => n.endsWith(".eml"));
    const raw = files
      .map((n) => fs.readFileSync(path.join(mailDir, "mail", n), "utf8"))
      .find((text) => text.includes(email));
    expect(raw).toBeDefined();
    const eml = (raw ?? "").replace(/\r\n/g, "\n");
    expect(eml).toMatch(/Content-Type: multipart\/related/);
    const html = decodedPart(eml, "text/html");
    const text = decodedPart(eml, "text/plain");
    for (const code of codes) {
      expect(text).toContain(code);
      expect(html).toContain(`src="cid:qr.${code}@almoner"`);
      const image = imagePart(eml, `qr.${code}@almoner`);
      expect(image.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
      // The image is the QR code of this very code.
      expect(
        image.equals(await QRCode.toBuffer(code, { errorCorrectionLevel: "M", margin: 4, scale: 6 })),
      ).toBe(true);
    }
    expect(text).toContain("Table (admits 8 people)");
  });

  it("the receipt of an event order tells when and where the event is, as the form shows it", async () => {
    const formId = await createForm(t, {
      ...validForms.event(),
      enableTimeAndLocation: true,
      eventDate: "2027-05-15",
      startTime: "18:30",
      endTime: "22:00",
      timeZone: "America/New_York",
      location: "Riverside Hall, 12 Quay Street",
    });
    const email = `when-${Math.random().toString(36).slice(2, 8)}@example.org`;
    await buy(formId, email, [{ name: "Adult", quantity: 1 }]);
    const receiptTo = (to: string) =>
      t.store.db
        .selectFrom("email_outbox")
        .select(["text_body", "html_body"])
        .where("to_address", "=", to)
        .executeTakeFirstOrThrow();
    const outbox = await receiptTo(email);
    for (const body of [outbox.text_body, outbox.html_body]) {
      expect(body).toContain("Saturday, May 15, 2027");
      expect(body).toMatch(/6:30\s?PM – 10:00\s?PM \(Eastern Time\)/);
      expect(body).toContain("Riverside Hall, 12 Quay Street");
    }
    // A form that does not show its time and place: the receipt tells none.
    const hidden = await createForm(t, {
      ...validForms.event(),
      enableTimeAndLocation: false,
      eventDate: "2027-05-15",
      location: "Riverside Hall",
    });
    const other = `none-${Math.random().toString(36).slice(2, 8)}@example.org`;
    await buy(hidden, other, [{ name: "Adult", quantity: 1 }]);
    const plain = await receiptTo(other);
    expect(plain.text_body).not.toContain("Riverside Hall");
    expect(plain.text_body).not.toContain("2027");
  });

  it("a refund in full voids the order's tickets: check-in is refused (409)", async () => {
    const { formId, paymentId } = await eventOrder();
    const refund = await t.request("POST", `/v1/payments/${paymentId}/refund`);
    expect(refund.status, refund.text).toBe(200);
    const tickets = (await list(formId)).body.tickets;
    expect(tickets.map((x) => x.status)).toEqual(["VOID", "VOID", "VOID"]);
    expect(tickets.every((x) => x.voidedAt !== null)).toBe(true);
    const res = await checkIn(formId, tickets[0].code);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: "voided", ticket: { status: "VOID" } });
    expect((await list(formId)).body.totals.tickets).toBe(0);
  });

  it("a ticket checked in, then voided by a full refund, is not among checkedIn=true, as totals count it", async () => {
    const { formId, paymentId } = await eventOrder();
    const [ticket, ...others] = (await list(formId)).body.tickets;
    expect((await checkIn(formId, ticket.code)).status).toBe(200);
    expect((await t.request("POST", `/v1/payments/${paymentId}/refund`)).status).toBe(200);
    const res = await list(formId, "?checkedIn=true");
    expect(res.status, res.text).toBe(200);
    expect(res.body.tickets).toEqual([]);
    expect(res.body.totals).toMatchObject({ tickets: 0, checkedIn: 0 });
    // The others: VALID and VOID, this one included (the two lists together are every ticket).
    const rest = (await list(formId, "?checkedIn=false")).body.tickets;
    expect(rest.map((x) => x.code).sort()).toEqual([ticket.code, ...others.map((x) => x.code)].sort());
    expect(rest.find((x) => x.code === ticket.code)).toMatchObject({ status: "VOID" });
    const csv = await t.request("GET", `/v1/forms/${formId}/tickets?checkedIn=true`, {
      headers: { Accept: "text/csv" },
    });
    expect(
      csv.text
        .replace(/^\uFEFF/, "")
        .trim()
        .split("\n"),
    ).toHaveLength(1);
  });

  it("a partial refund voids none", async () => {
    const { formId, paymentId } = await eventOrder();
    const refund = await t.request("POST", `/v1/payments/${paymentId}/refund`, { body: { amount: 50 } });
    expect(refund.status, refund.text).toBe(200);
    expect((await list(formId)).body.tickets.map((x) => x.status)).toEqual(["VALID", "VALID", "VALID"]);
  });

  it("checks a ticket in once: the second time is a 409 that says when and by whom; undo makes it valid", async () => {
    const { formId } = await eventOrder();
    const [ticket] = (await list(formId)).body.tickets;
    // Typed at the door: lower case, without dashes.
    const first = await checkIn(formId, ticket.code.replace(/-/g, "").toLowerCase());
    expect(first.status, first.text).toBe(200);
    expect(first.body).toMatchObject({
      code: ticket.code,
      status: "CHECKED_IN",
      checkedInBy: `key:${t.org.keyId}`,
    });
    expect(first.body.checkedInAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    const again = await checkIn(formId, ticket.code);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: "already_checked_in",
      checkedInAt: first.body.checkedInAt,
      checkedInBy: `key:${t.org.keyId}`,
      ticket: { code: ticket.code, status: "CHECKED_IN" },
    });
    expect(String(again.body.error)).toContain(String(first.body.checkedInAt));

    const after = await list(formId);
    expect(after.body.totals).toMatchObject({ checkedIn: 1, peopleAdmitted: ticket.admits });

    const undone = await undo(formId, ticket.code);
    expect(undone.status, undone.text).toBe(200);
    expect(undone.body).toMatchObject({ status: "VALID", checkedInAt: null, checkedInBy: null });
    const undoAgain = await undo(formId, ticket.code);
    expect(undoAgain.status).toBe(409);
    expect(undoAgain.body).toMatchObject({ code: "not_checked_in" });
    expect((await checkIn(formId, ticket.code)).status).toBe(200);

    const audit = await t.store.db
      .selectFrom("audit_log")
      .select(["action", "actor"])
      .where("subject_id", "=", ticket.id)
      .orderBy("id")
      .execute();
    expect(audit.map((a) => a.action)).toEqual([
      "ticket.checked_in",
      "ticket.check_in_undone",
      "ticket.checked_in",
    ]);
    const events = await t.store.db
      .selectFrom("outbox_events")
      .select(["type", "data"])
      .where("subject_id", "=", ticket.id)
      .execute();
    expect(events.map((e) => e.type)).toEqual(["ticket.checked_in", "ticket.checked_in"]);
    expect(JSON.parse(events[0].data)).toMatchObject({ code: ticket.code, status: "CHECKED_IN" });
  });

  it("deleting the event's form stops its sales but not its door: its tickets are listed, read and checked in", async () => {
    const { formId } = await eventOrder();
    expect((await t.request("DELETE", `/v1/forms/${formId}`)).status).toBe(200);
    expect((await t.request("GET", `/v1/forms/${formId}`)).status).toBe(410);
    const res = await list(formId);
    expect(res.status, res.text).toBe(200);
    expect(res.body.tickets).toHaveLength(3);
    const [first] = res.body.tickets;
    expect((await t.request<Ticket>("GET", `/v1/forms/${formId}/tickets/${first.code}`)).body).toMatchObject({
      code: first.code,
      status: "VALID",
    });
    const admitted = await checkIn(formId, first.code);
    expect(admitted.status, admitted.text).toBe(200);
    expect(admitted.body.status).toBe("CHECKED_IN");
    expect((await undo(formId, first.code)).body.status).toBe("VALID");
    // Still another organization's form to anyone else.
    const other = await t.newOrg({ name: "Elsewhere" });
    expect((await list(formId, "", other.key)).status).toBe(403);
  });

  it("an unknown code is a 404, as is a code of another event", async () => {
    const { formId } = await eventOrder();
    const other = await eventOrder();
    const [theirs] = (await list(other.formId)).body.tickets;
    expect((await checkIn(formId, "AAAA-BBBB-CC")).status).toBe(404);
    expect((await checkIn(formId, "not a code")).status).toBe(404);
    expect((await checkIn(formId, theirs.code)).status).toBe(404);
    expect((await t.request("GET", `/v1/forms/${formId}/tickets/AAAA-BBBB-CC`)).status).toBe(404);
    const got = await t.request<Ticket>(
      "GET",
      `/v1/forms/${other.formId}/tickets/${theirs.code.toLowerCase()}`,
    );
    expect(got.body).toMatchObject({ code: theirs.code, status: "VALID" });
  });

  it("takes a check-in without a body or with {}, and refuses a body that is not a JSON object with 400, checking in nothing", async () => {
    const { formId } = await eventOrder();
    const [first, second, third] = (await list(formId)).body.tickets;
    const url = (code: string) => `/v1/forms/${formId}/tickets/${code}/check-in`;
    const post = (code: string, body?: string, type = "application/json") =>
      t.app.request(url(code), {
        method: "POST",
        headers: {
          Authorization: `Bearer ${t.org.key}`,
          ...(body === undefined ? {} : { "Content-Type": type }),
        },
        ...(body === undefined ? {} : { body }),
      });
    const refused = await post(first.code, "not json");
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({ error: "Invalid JSON body" });
    expect((await post(first.code, "[1]")).status).toBe(400);
    const unknown = await post(first.code, '{"door":"north"}');
    expect(unknown.status).toBe(400);
    expect((await unknown.json()).details).toEqual(["door is not a recognised field"]);
    expect((await list(formId)).body.tickets.every((x: Ticket) => x.status === "VALID")).toBe(true);
    expect((await post(first.code)).status).toBe(200);
    expect((await post(second.code, "{}")).status).toBe(200);
    expect((await post(third.code, "")).status).toBe(200);
  });

  it("undoes a check-in once when undone from several doors at once; the others' 409 shows the ticket as it now is", async () => {
    const { formId } = await eventOrder();
    const [ticket] = (await list(formId)).body.tickets;
    expect((await checkIn(formId, ticket.code)).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 6 }, () => undo(formId, ticket.code)));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409, 409, 409]);
    for (const refused of answers.filter((a) => a.status === 409)) {
      expect(refused.body.code).toBe("not_checked_in");
      expect((refused.body.ticket as Ticket).status).toBe("VALID");
    }
  });

  it("concurrent check-ins of one ticket, through two app instances with their own connections, admit it once", async () => {
    const store2 = await t.database.open();
    const deps2 = await composeDeps(store2, t.config, Date.now);
    const app2 = createApp(deps2);
    try {
      const { formId } = await eventOrder();
      const tickets = (await list(formId)).body.tickets;
      for (const ticket of tickets) {
        const url = `/v1/forms/${formId}/tickets/${ticket.code}/check-in`;
        const init = { method: "POST", headers: { Authorization: `Bearer ${t.org.key}` } };
        const responses = await Promise.all(
          Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? t.app : app2).request(url, init)),
        );
        const statuses = responses.map((r) => r.status).sort();
        expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
      }
      const audit = await t.store.db
        .selectFrom("audit_log")
        .select((eb) => eb.fn.countAll<number>().as("n"))
        .where("action", "=", "ticket.checked_in")
        .where(
          "subject_id",
          "in",
          tickets.map((x) => x.id),
        )
        .executeTakeFirstOrThrow();
      expect(Number(audit.n)).toBe(tickets.length);
    } finally {
      await deps2.metrics.close();
      await store2.close();
    }
  });

  it("filters by checked-in state, ticket type and search (name, e-mail, code), pages, and exports CSV", async () => {
    const formId = await createForm(t, validForms.event());
    await buy(formId, "ada@example.org", [{ name: "Adult", quantity: 3 }]);
    await buy(formId, "linus@example.org", [{ name: "Table", quantity: 1 }]);
    const all = (await list(formId)).body.tickets;
    expect(all).toHaveLength(4);
    const adult = all.find((x) => x.ticketType === "Adult") ?? all[0];
    await checkIn(formId, adult.code);

    expect((await list(formId, "?checkedIn=true")).body.tickets.map((x) => x.code)).toEqual([adult.code]);
    expect((await list(formId, "?checkedIn=false")).body.tickets).toHaveLength(3);
    expect((await list(formId, "?ticketType=Table")).body.tickets.map((x) => x.buyer.email)).toEqual([
      "linus@example.org",
    ]);
    expect((await list(formId, "?search=LINUS")).body.tickets).toHaveLength(1);
    expect((await list(formId, "?search=grace%20hop")).body.tickets).toHaveLength(4);
    const partOfCode = all[2].code.replace(/-/g, "").slice(2, 8).toLowerCase();
    expect((await list(formId, `?search=${partOfCode}`)).body.tickets.map((x) => x.code)).toContain(
      all[2].code,
    );
    // Part of a code is read as check-in reads one: dashes and spaces optional, O for 0, I or L for 1.
    await t.store.db
      .updateTable("tickets")
      .set({ code: "A0B1-C0D1-EF" })
      .where("id", "=", all[2].id)
      .execute();
    const found = await list(formId, `?search=${encodeURIComponent("aOb l-cOdI")}`);
    expect(found.body.tickets.map((x) => x.code)).toEqual(["A0B1-C0D1-EF"]);
    // A search of only dashes is no code at all: it finds by name and e-mail alone.
    expect((await list(formId, "?search=--")).body.tickets).toHaveLength(0);
    expect((await list(formId, "?checkedIn=maybe")).status).toBe(400);

    const first = await list(formId, "?limit=3");
    expect(first.body).toMatchObject({ count: 3, hasMore: true });
    const second = await list(formId, `?limit=3&lastEvaluatedKey=${first.body.lastEvaluatedKey}`);
    expect(second.body).toMatchObject({ count: 1, hasMore: false });
    expect([...first.body.tickets, ...second.body.tickets].map((x) => x.id)).toEqual(all.map((x) => x.id));
    const mixed = await list(
      formId,
      `?limit=3&checkedIn=false&lastEvaluatedKey=${first.body.lastEvaluatedKey}`,
    );
    expect(mixed.status).toBe(400);

    const csv = await t.request("GET", `/v1/forms/${formId}/tickets?ticketType=Adult`, {
      headers: { Accept: "text/csv" },
    });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("Content-Type")).toMatch(/^text\/csv/);
    const lines = csv.text
      .replace(/^\uFEFF/, "")
      .trim()
      .split("\r\n");
    expect(lines[0]).toMatch(/^Code,Ticket type,Admits,Buyer name,Buyer email,Status,Checked in \(UTC\)/);
    expect(lines).toHaveLength(4);
    expect(lines.slice(1).every((l) => l.includes("ada@example.org"))).toBe(true);
    expect(lines.some((l) => l.startsWith(`${adult.code},`) && l.includes("CHECKED_IN"))).toBe(true);
  });

  describe("who may", () => {
    async function session(role: StaffRole, email: string): Promise<string> {
      const made = await createStaffMember(t.store, {
        organizationId: t.org.id,
        email,
        role,
        publicUrl: t.config.publicUrl,
        nowMs: Date.now(),
      });
      const token = new URL(made.setupUrl).searchParams.get("token") ?? "";
      const res = await t.app.request("/api/staff/setup", {
        method: "POST",
        headers: { Origin: ORIGIN, "Content-Type": "application/json" },
        body: JSON.stringify({ token, password: PASSWORD }),
      });
      expect(res.status, await res.clone().text()).toBe(200);
      return (res.headers.get("Set-Cookie") ?? "").split(";")[0];
    }
    const asSession = (cookie: string, method: string, url: string) =>
      t.app.request(url, { method, headers: { Cookie: cookie, Origin: ORIGIN } });

    it("a key without tickets:write may list (tickets:read) but not check in (403)", async () => {
      const { formId } = await eventOrder();
      const [ticket] = (await list(formId)).body.tickets;
      const readOnly = await createApiKey(
        t.store.db,
        { organizationId: t.org.id, sandbox: false, permissions: ["tickets:read"] },
        Date.now(),
      );
      const formsOnly = await createApiKey(
        t.store.db,
        { organizationId: t.org.id, sandbox: false, permissions: ["forms:read", "forms:write"] },
        Date.now(),
      );
      expect((await list(formId, "", readOnly.key)).status).toBe(200);
      const refused = await checkIn(formId, ticket.code, { key: readOnly.key });
      expect(refused.status).toBe(403);
      expect(refused.body).toEqual({ error: "Missing permission: tickets:write" });
      expect((await list(formId, "", formsOnly.key)).status).toBe(403);
    });

    it("Staff may check in; Finance may list but not check in", async () => {
      const { formId } = await eventOrder();
      const [ticket] = (await list(formId)).body.tickets;
      const staff = await session("STAFF", `door-${Math.random().toString(36).slice(2, 6)}@example.org`);
      const finance = await session("FINANCE", `books-${Math.random().toString(36).slice(2, 6)}@example.org`);
      const url = `/v1/forms/${formId}/tickets/${ticket.code}/check-in`;
      expect((await asSession(finance, "GET", `/v1/forms/${formId}/tickets`)).status).toBe(200);
      expect((await asSession(finance, "POST", url)).status).toBe(403);
      const ok = await asSession(staff, "POST", url);
      expect(ok.status).toBe(200);
      const body = (await ok.json()) as Ticket;
      expect(body.checkedInBy).toMatch(/^door-.*@example\.org$/);
    });

    it("another organization's event is refused (403), its tickets unseen", async () => {
      const { formId } = await eventOrder();
      const [ticket] = (await list(formId)).body.tickets;
      const other = await t.newOrg();
      expect((await list(formId, "", other.key)).status).toBe(403);
      expect((await checkIn(formId, ticket.code, { key: other.key })).status).toBe(403);
      expect((await list("8d3f1c55-0000-4000-8000-000000000000")).status).toBe(404);
    });
  });
});

/** The decoded body of the message's first part of `type`. */
function decodedPart(eml: string, type: string): string {
  const at = eml.indexOf(`Content-Type: ${type}`);
  expect(at).toBeGreaterThan(-1);
  const section = eml.slice(at);
  const start = section.indexOf("\n\n") + 2;
  const end = section.indexOf("\n--", start);
  const body = section.slice(start, end);
  return /Content-Transfer-Encoding: quoted-printable/i.test(section.slice(0, start))
    ? Buffer.from(
        body
          .replace(/=\n/g, "")
          .replace(/=([0-9A-F]{2})/g, (_, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
        "latin1",
      ).toString("utf8")
    : /Content-Transfer-Encoding: base64/i.test(section.slice(0, start))
      ? Buffer.from(body, "base64").toString("utf8")
      : body;
}

/** The bytes of the inline image part with this Content-ID. */
function imagePart(eml: string, cid: string): Buffer {
  const sections = eml.split(/\n--[^\n]+\n/);
  const section = sections.find((s) => s.includes(`Content-ID: <${cid}>`));
  expect(section, `no part with Content-ID <${cid}>`).toBeDefined();
  const text = section ?? "";
  expect(text).toMatch(/Content-Type: image\/png/);
  expect(text).toMatch(/Content-Disposition: inline/);
  return Buffer.from(text.slice(text.indexOf("\n\n") + 2), "base64");
}
