import os from "node:os";
import { createApp } from "../../server/app.js";
import { composeDeps } from "../../server/compose.js";
import { loadConfig } from "../../server/config.js";
import { openStore } from "../../server/store/database.js";
import { recordPgQueries } from "../support/pgQueries.js";

/**
 * Round trips to PostgreSQL per completed checkout: the app is run in this process on the bench's
 * database, and every query a pg client sends while checkouts run is counted as a round trip unless it was
 * written behind one still waiting for its answer (a transaction's `begin` goes out with its first
 * statement). The checkouts are the checkout scenario's: a one-time card gift on the
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
    const recording = recordPgQueries();
    let statements: string[] = [];
    try {
      for (let i = 0; i < checkouts; i++) {
        const before = recording.sent.length;
        await checkout(i);
        if (i === 0)
          statements = recording.sent
            .slice(before)
            .map((q) => `${q.roundTrip ? "" : "+ "}${q.text.replace(/\s+/g, " ")}`);
      }
    } finally {
      recording.stop();
    }
    const roundTrips = recording.sent.filter((q) => q.roundTrip).length;
    return { perCheckout: roundTrips / checkouts, statements };
  } finally {
    await deps.metrics.close();
    await store.close();
  }
}
