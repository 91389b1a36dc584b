import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { card, checkout, createForm, donor } from "../support/checkout.js";
import { dialect, setupTestApp, type TestApp, validForms } from "../support/testApp.js";

/**
 * What is sold stays sold: stock is counted by name, so a form update (or its preview) that renames or
 * removes a ticket type, sponsorship option or promo code with sales, or lowers a quantity below them, is a
 * 409 with nothing written; changes that leave the sales alone pass.
 */

type Json = Record<string, unknown>;
type TicketOut = { name: string; quantity: number | null; quantitySold: number };

describe(`form updates and what is sold (${dialect})`, () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await setupTestApp({ env: { CHECKOUT_LIMIT_PER_IP: "0", CHECKOUT_LIMIT_PER_FORM: "0" } });
  });
  afterAll(async () => {
    await t.close();
  });

  const TICKETS = [
    { name: "Adult", price: 50, quantity: 50 },
    { name: "Table", price: 400, ticketType: "GROUP", groupSize: 8, quantity: 5 },
  ];

  async function buy(formId: string, order: Json): Promise<void> {
    const res = await checkout(t, formId, { ...order, donor: donor(), paymentMethod: card() });
    expect(res.status, res.text).toBe(201);
  }

  /** An event with 8 Adult tickets (of 50) and 1 Table sold, 2 of them with the code EARLY. */
  async function soldEvent(): Promise<string> {
    const formId = await createForm(t, {
      ...validForms.event(),
      tickets: TICKETS,
      promoCodes: [{ code: "EARLY", discountType: "percentage", discountValue: 10, quantity: 20 }],
    });
    await buy(formId, { tickets: [{ name: "Adult", quantity: 6 }] });
    await buy(formId, { tickets: [{ name: "Adult", quantity: 2 }], promoCode: "early" });
    await buy(formId, { tickets: [{ name: "Table", quantity: 1 }], promoCode: "EARLY" });
    return formId;
  }

  const get = async (formId: string) => {
    const res = await t.request("GET", `/v1/forms/${formId}`);
    expect(res.status).toBe(200);
    return res.body as Json & { tickets: TicketOut[]; updatedAt: string };
  };
  const put = (formId: string, body: Json) => t.request("PUT", `/v1/forms/${formId}`, { body });
  const preview = (formId: string, body: Json) => t.request("POST", `/v1/forms/${formId}/preview`, { body });
  const withTicket = (i: number, change: Json) =>
    TICKETS.map((ticket, j) => (i === j ? { ...ticket, ...change } : ticket));
  const details = (res: { body: Json }) => (res.body.details ?? []) as string[];

  it("refuses to rename a ticket type with sales (409 naming it and its sales), writing nothing", async () => {
    const formId = await soldEvent();
    const before = await get(formId);
    const res = await put(formId, { tickets: withTicket(0, { name: "Grown-up" }) });
    expect(res.status, res.text).toBe(409);
    expect(res.body.error).toMatch(
      /^This change would undo what is already sold: tickets "Adult" has 8 tickets/,
    );
    expect(res.body.error).toMatch(/add a new one instead; to stop selling it, set its quantity to 8/);
    expect(details(res)).toHaveLength(1);
    expect(details(res)[0]).toMatch(/^tickets "Adult" has 8 tickets sold or held, so it cannot be renamed/);

    const after = await get(formId);
    expect(after).toEqual(before);
    expect(after.tickets[0]).toMatchObject({ name: "Adult", quantity: 50, quantitySold: 8 });
    const audit = await t.store.db
      .selectFrom("audit_log")
      .select("id")
      .where("action", "=", "form.updated")
      .where("subject_id", "=", formId)
      .execute();
    expect(audit).toEqual([]);
    const tickets = await t.request<{ tickets: unknown[] }>(
      "GET",
      `/v1/forms/${formId}/tickets?ticketType=Adult`,
    );
    expect(tickets.body.tickets).toHaveLength(8);
  });

  it("counts the sales of items named like an object's own properties (__proto__, constructor) as any other", async () => {
    const odd = [
      { name: "__proto__", price: 20, quantity: 10 },
      { name: "constructor", price: 20, quantity: 10 },
    ];
    const formId = await createForm(t, { ...validForms.event(), tickets: odd });
    await buy(formId, { tickets: [{ name: "__proto__", quantity: 2 }] });
    await buy(formId, { tickets: [{ name: "constructor", quantity: 1 }] });
    expect((await get(formId)).tickets.map((x) => [x.name, x.quantitySold])).toEqual([
      ["__proto__", 2],
      ["constructor", 1],
    ]);
    const renamed = await put(formId, { tickets: [{ ...odd[0], name: "Proto" }, odd[1]] });
    expect(renamed.status, renamed.text).toBe(409);
    expect(details(renamed)).toEqual([
      expect.stringMatching(/^tickets "__proto__" has 2 tickets sold or held/),
    ]);
    const builder = await put(formId, { tickets: [odd[0], { ...odd[1], name: "Builder" }] });
    expect(builder.status, builder.text).toBe(409);
    expect(details(builder)).toEqual([
      expect.stringMatching(/^tickets "constructor" has 1 ticket sold or held/),
    ]);
  });

  it("answers a 503 with Retry-After, writing nothing, when the update loses a race for a database lock", async () => {
    const formId = await soldEvent();
    const before = await get(formId);
    // What PostgreSQL throws at the loser of a deadlock (SQLite: SQLITE_BUSY past its wait).
    const lost = Object.assign(new Error("deadlock detected"), { code: "40P01" });
    const transact = vi.spyOn(t.store, "transact").mockRejectedValueOnce(lost);
    try {
      const res = await put(formId, { description: "Now with dessert" });
      expect(res.status, res.text).toBe(503);
      expect(res.headers.get("Retry-After")).toBe("1");
      expect(res.body).toEqual({ error: "The database was busy and nothing was changed; please try again." });
    } finally {
      transact.mockRestore();
    }
    expect(await get(formId)).toEqual(before);
    const again = await put(formId, { description: "Now with dessert" });
    expect(again.status, again.text).toBe(200);
  });

  it("refuses to remove a ticket type with sales, and a GROUP ticket alike", async () => {
    const formId = await soldEvent();
    const removed = await put(formId, { tickets: [TICKETS[1]] });
    expect(removed.status, removed.text).toBe(409);
    expect(details(removed)).toEqual([expect.stringMatching(/^tickets "Adult" has 8 tickets sold or held/)]);

    const group = await put(formId, { tickets: withTicket(1, { name: "Table for eight" }) });
    expect(group.status, group.text).toBe(409);
    expect(details(group)).toEqual([expect.stringMatching(/^tickets "Table" has 1 ticket sold or held/)]);
    expect((await get(formId)).tickets.map((x) => x.name)).toEqual(["Adult", "Table"]);
  });

  it("refuses a quantity lowered below the sales; at them, above them, or other changes pass", async () => {
    const formId = await soldEvent();
    const lower = await put(formId, { tickets: withTicket(0, { quantity: 5 }) });
    expect(lower.status, lower.text).toBe(409);
    expect(details(lower)).toEqual([
      'tickets[0].quantity must be at least 8, the tickets of "Adult" sold or held',
    ]);

    const closed = await put(formId, { tickets: withTicket(0, { quantity: 8, price: 55 }) });
    expect(closed.status, closed.text).toBe(200);
    expect((await get(formId)).tickets[0]).toMatchObject({ quantity: 8, quantitySold: 8, price: 55 });

    // The documented way to rename: a new type beside the old one, whose sales are closed.
    const added = await put(formId, {
      tickets: [...withTicket(0, { quantity: 8 }), { name: "Grown-up", price: 50, quantity: 42 }],
    });
    expect(added.status, added.text).toBe(200);
    const soldOut = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 1 }],
      donor: donor(),
      paymentMethod: card(),
    });
    expect(soldOut.status).toBe(400);
    expect(String(soldOut.body.error)).toMatch(/^Sold out/);
    await buy(formId, { tickets: [{ name: "Grown-up", quantity: 1 }] });
    expect((await get(formId)).tickets.map((x) => [x.name, x.quantitySold])).toEqual([
      ["Adult", 8],
      ["Table", 1],
      ["Grown-up", 1],
    ]);
  });

  it("lets a type without sales be renamed or removed", async () => {
    const formId = await createForm(t, { ...validForms.event(), tickets: TICKETS });
    await buy(formId, { tickets: [{ name: "Table", quantity: 1 }] });
    const res = await put(formId, { tickets: [withTicket(1, {})[1], { name: "Grown-up", price: 50 }] });
    expect(res.status, res.text).toBe(200);
    expect((await get(formId)).tickets.map((x) => [x.name, x.quantitySold])).toEqual([
      ["Table", 1],
      ["Grown-up", 0],
    ]);
  });

  it("once the sales are refunded in full, the type may be renamed", async () => {
    const formId = await createForm(t, { ...validForms.event(), tickets: TICKETS });
    const res = await checkout(t, formId, {
      tickets: [{ name: "Adult", quantity: 2 }],
      donor: donor(),
      paymentMethod: card(),
    });
    const paymentId = (res.body.payment as { paymentID: string }).paymentID;
    expect((await put(formId, { tickets: withTicket(0, { name: "Grown-up" }) })).status).toBe(409);
    expect((await t.request("POST", `/v1/payments/${paymentId}/refund`)).status).toBe(200);
    expect((await put(formId, { tickets: withTicket(0, { name: "Grown-up" }) })).status).toBe(200);
  });

  it("treats promo codes alike: not renamed or removed once redeemed, nor limited below it; case may change", async () => {
    const formId = await soldEvent();
    const code = (change: Json) => [
      { code: "EARLY", discountType: "percentage", discountValue: 10, quantity: 20, ...change },
    ];
    const renamed = await put(formId, { promoCodes: code({ code: "EARLYBIRD" }) });
    expect(renamed.status, renamed.text).toBe(409);
    expect(details(renamed)).toEqual([
      expect.stringMatching(/^promoCodes "EARLY" has been redeemed 2 times/),
    ]);
    expect((await put(formId, { promoCodes: [] })).status).toBe(409);
    const lower = await put(formId, { promoCodes: code({ quantity: 1 }) });
    expect(details(lower)).toEqual([
      'promoCodes[0].quantity must be at least 2, the times "EARLY" was redeemed',
    ]);
    const cased = await put(formId, { promoCodes: code({ code: "early", discountValue: 15 }) });
    expect(cased.status, cased.text).toBe(200);
    expect((await get(formId)).promoCodes).toEqual([
      expect.objectContaining({ code: "early", timesRedeemed: 2 }),
    ]);
  });

  it("treats sponsorship options with a quantity alike, their group's title included", async () => {
    const group = (groupTitle: string, optionTitle: string, quantity = 3) => [
      { groupTitle, description: "", options: [{ optionTitle, amount: 1000, quantity }] },
    ];
    const formId = await createForm(t, {
      ...validForms.sponsorship(),
      sponsorshipGroups: group("Booths", "Gold"),
    });
    await buy(formId, { product: { group: "Booths", name: "Gold", quantity: 2 } });

    for (const change of [group("Booths", "Platinum"), group("Stands", "Gold"), group("Other", "Bronze")]) {
      const res = await put(formId, { sponsorshipGroups: change });
      expect(res.status, res.text).toBe(409);
      expect(details(res)).toEqual([
        expect.stringMatching(/^sponsorshipGroups "Booths" option "Gold" has 2 sold/),
      ]);
    }
    const lower = await put(formId, { sponsorshipGroups: group("Booths", "Gold", 1) });
    expect(details(lower)).toEqual([
      'sponsorshipGroups[0].options[0].quantity must be at least 2, the "Gold" sold or held',
    ]);
    expect((await put(formId, { sponsorshipGroups: group("Booths", "Gold", 2) })).status).toBe(200);
  });

  it("a rename racing checkouts never leaves sales under a name the form no longer has", async () => {
    for (let round = 0; round < 3; round++) {
      const formId = await createForm(t, { ...validForms.event(), tickets: TICKETS });
      const order = (i: number) =>
        checkout(t, formId, {
          tickets: [{ name: "Adult", quantity: 1 }],
          donor: donor(`racer-${round}-${i}@example.org`),
          paymentMethod: card(),
        });
      const [renamed, ...orders] = await Promise.all([
        put(formId, { tickets: withTicket(0, { name: "Grown-up" }) }),
        ...Array.from({ length: 12 }, (_, i) => order(i)),
      ]);
      const sold = orders.filter((r) => r.status === 201).length;
      expect(orders.every((r) => r.status === 201 || r.status === 400)).toBe(true);
      const form = await get(formId);
      const adultTickets = await t.store.db
        .selectFrom("tickets")
        .select("id")
        .where("form_id", "=", formId)
        .where("ticket_type", "=", "Adult")
        .execute();
      expect(adultTickets).toHaveLength(sold);
      if (renamed.status === 200) {
        // Renamed before any sale: none was made under the old name afterwards.
        expect(sold).toBe(0);
        expect(form.tickets.map((x) => x.name)).toEqual(["Grown-up", "Table"]);
      } else {
        expect(renamed.status, renamed.text).toBe(409);
        expect(form.tickets[0]).toMatchObject({ name: "Adult", quantitySold: sold });
      }
    }
  });

  it("the preview answers the save's 409 (the editor shows it at the tickets); an unchanged draft previews", async () => {
    const formId = await soldEvent();
    const res = await preview(formId, { tickets: withTicket(0, { name: "Grown-up" }) });
    expect(res.status, res.text).toBe(409);
    expect(details(res)).toEqual([expect.stringMatching(/^tickets "Adult" has 8 tickets sold or held/)]);
    expect((await preview(formId, {})).status).toBe(200);
    expect((await preview(formId, { tickets: withTicket(0, { description: "Over 18" }) })).status).toBe(200);
  });

  it("a form whose quantity is already below its sales can still be edited, that quantity left or raised", async () => {
    const formId = await soldEvent();
    // As a form saved before the rule could be: 8 sold of a quantity of 5.
    const row = await t.store.db
      .selectFrom("forms")
      .select("config")
      .where("id", "=", formId)
      .executeTakeFirstOrThrow();
    const config = JSON.parse(row.config);
    config.tickets[0].quantity = 5;
    await t.store.db
      .updateTable("forms")
      .set({ config: JSON.stringify(config) })
      .where("id", "=", formId)
      .execute();
    expect((await preview(formId, {})).status).toBe(200);
    expect((await put(formId, { description: "Doors at seven" })).status).toBe(200);
    expect((await put(formId, { tickets: withTicket(0, { quantity: 6 }) })).status).toBe(200);
    expect((await put(formId, { tickets: withTicket(0, { quantity: 4 }) })).status).toBe(409);
  });
});
