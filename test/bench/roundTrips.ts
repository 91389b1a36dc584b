import os from "node:os";
import pg from "pg";
import { createApp } from "../../server/app.js";
import { composeDeps } from "../../server/compose.js";
import { loadConfig } from "../../server/config.js";
import { openStore } from "../../server/store/database.js";

/**
 * Round trips to PostgreSQL per completed checkout: the app is run in this process on the bench's
 * database, and every query a pg client sends while checkouts run is counted (node-pg sends one query per
 * round trip: it does not pipeline). The checkouts are the checkout scenario's: a one-time card gift on the
 * sandbox processor by a donor who has given before, so the contact is matched, not created.
 */
export async function checkoutRoundTrips(
  databaseUrl: string,
  formId: string,
  checkouts = 20,
): Promise<{ perCheckout: number; statements: string[] }> {
  const store = await openStore(databaseUrl);
  const config = loadConfig({
    DATA_DIR: os.tmpdir(),
    DATABASE_URL: databaseUrl,
    CHECKOUT_LIMIT_PER_IP: "0",
    CHECKOUT_LIMIT_PER_FORM: "0",
  });
  const deps = await composeDeps(store, config);
  const app = createApp(deps);
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  let counting = false;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    if (counting) {
      const text = typeof args[0] === "string" ? args[0] : (args[0] as { text?: string } | null)?.text;
      sent.push(String(text).replace(/\s+/g, " "));
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  const checkout = async (i: number) => {
    const res = await app.request(`/api/forms/${formId}/checkout`, {
      method: "POST",
      headers: { "Content-Type": "application/json", Origin: config.publicUrl },
      body: JSON.stringify({
        amount: 25,
        frequency: "ONE_TIME",
        donor: { firstName: "Bench", lastName: "Counted", email: `counted${i % 2}@bench.example.org` },
        paymentMethod: { type: "card", number: "4242424242424242", expMonth: 12, expYear: 2034, cvc: "123" },
      }),
    });
    if (res.status !== 201) throw new Error(`a counted checkout answered ${res.status}: ${await res.text()}`);
  };
  try {
    // The first ones warm the caches (form, organization) and make the two donors' contacts.
    for (let i = 0; i < 4; i++) await checkout(i);
    let statements: string[] = [];
    counting = true;
    for (let i = 0; i < checkouts; i++) {
      const before = sent.length;
      await checkout(i);
      if (i === 0) statements = sent.slice(before);
    }
    counting = false;
    return { perCheckout: sent.length / checkouts, statements };
  } finally {
    pg.Client.prototype.query = query;
    await deps.metrics.close();
    await store.close();
  }
}
