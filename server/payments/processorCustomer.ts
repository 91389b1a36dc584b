import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import type { PaymentProcessor } from "../processors/port.js";
import type { Organization } from "../store/organizations.js";
import {
  findProcessorCustomer,
  forgetProcessorCustomer,
  saveProcessorCustomer,
} from "../store/processorCustomers.js";

/** The donor's customer at the processor (processors that have customers), made once per donor. */
export async function customerFor(
  deps: AppDeps,
  processor: PaymentProcessor,
  org: Organization,
  donor: { email: string; firstName: string; lastName: string },
  /** The donor's customer the processor no longer has: forgotten, and a new one made in its place. */
  gone?: string,
): Promise<string | null> {
  if (!processor.createCustomer) return null;
  const db = deps.store.db;
  if (gone) await forgetProcessorCustomer(db, org.id, processor.account, donor.email, gone);
  const known = await findProcessorCustomer(db, org.id, processor.account, donor.email);
  if (known) return known;
  const key = `customer:${org.id}:${donor.email.trim().toLowerCase()}`;
  const made = await processor.createCustomer({
    email: donor.email,
    name: `${donor.firstName} ${donor.lastName}`.trim(),
    // The same key makes the same customer once; after one was deleted, a key of its own makes another.
    idempotencyKey: gone ? `${key.slice(0, 160)}:after:${gone.slice(0, 39)}` : key.slice(0, 200),
    metadata: { almoner_organization: org.id },
  });
  return saveProcessorCustomer(db, org.id, processor.account, donor.email, made, isoAt(deps.now()));
}
