import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { outboxRow } from "../../server/mail/outbox.js";
import type { Store } from "../../server/store/database.js";
import { pruneExpired } from "../../server/store/maintenance.js";
import { createOrganization } from "../../server/store/organizations.js";
import { freshDatabase, type TestDatabase } from "../support/testApp.js";

/**
 * Upkeep's pruning of the e-mail outbox: an e-mail of no payment (a sign-in or reset link, an invitation)
 * is deleted once sent and 30 days old, so the links it carried are not kept in the clear for ever; a
 * recent e-mail and one still waiting to be sent stay (a receipt names its payment and is never pruned).
 */
describe("pruning the e-mail outbox", () => {
  let database: TestDatabase;
  let store: Store;

  beforeAll(async () => {
    database = await freshDatabase();
    store = await database.open();
  });
  afterAll(async () => {
    await store.close();
    await database.drop();
  });

  it("deletes sent or given-up e-mails of no payment after 30 days, and keeps recent ones and unsent ones", async () => {
    const now = Date.parse("2026-11-29T12:00:00Z");
    const day = 24 * 60 * 60 * 1000;
    const org = await createOrganization(store.db, { name: "Prune" }, now);
    const mail = (subject: string, atMs: number, status: string, paymentId?: string) => ({
      ...outboxRow(
        {
          organizationId: org.id,
          to: "donor@example.org",
          fromName: "Prune",
          subject,
          text: `Sign in: https://give.example.org/manage/${org.id}?token=secret-${subject}`,
          html: "<p>Sign in</p>",
          ...(paymentId ? { paymentId } : {}),
        },
        atMs,
      ),
      status,
    });
    await store.db
      .insertInto("email_outbox")
      .values([
        mail("old link", now - 31 * day, "SENT"),
        mail("old failed link", now - 40 * day, "FAILED"),
        mail("recent link", now - 29 * day, "SENT"),
        mail("old unsent", now - 31 * day, "PENDING"),
      ])
      .execute();
    await pruneExpired(store.db, now);
    const left = await store.db.selectFrom("email_outbox").select("subject").orderBy("subject").execute();
    expect(left.map((r) => r.subject)).toEqual(["old unsent", "recent link"]);
  });
});
