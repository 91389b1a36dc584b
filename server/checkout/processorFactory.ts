import type { Config } from "../config.js";
import type { Store } from "../store/database.js";
import { DatabaseLedger } from "../store/processorLedger.js";
import { sandboxSecret } from "../store/settings.js";
import { createProcessor, type PaymentProcessor } from "./processor.js";

/**
 * The processor a server (or the CLI) uses: the sandbox, signing with a secret kept in the database and
 * remembering idempotency keys there, so every process sharing the database agrees on both. As its
 * memory is all in that database, it can also charge inside a caller's transaction (`inTransaction`).
 */
export async function openProcessor(
  store: Store,
  config: Config,
  now: () => number,
): Promise<PaymentProcessor> {
  return createProcessor("sandbox", {
    secret: await sandboxSecret(store.db),
    now,
    ledger: new DatabaseLedger(store, now),
    // The same table through a transaction's own connection: checkouts charge inside their transaction.
    transactionLedger: (trx) => new DatabaseLedger({ db: trx, transact: (work) => work(trx) }, now),
    bankSettleMs: config.sandboxBankSettleMs,
  });
}
