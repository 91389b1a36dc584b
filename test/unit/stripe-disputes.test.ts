import type Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { disputeState } from "../../server/processors/stripe/processor.js";

/** Whether a Stripe dispute holds the gift's money out of the balance, by its status. */

const dispute = (status: string) =>
  ({
    id: "dp_1",
    object: "dispute",
    amount: 5000,
    currency: "usd",
    reason: "fraudulent",
    status,
    created: 1_700_000_000,
  }) as unknown as Stripe.Dispute;

describe("a dispute's funds", () => {
  it("are withdrawn while it is open, lost or appealed", () => {
    for (const status of [
      "needs_response",
      "under_review",
      "lost",
      "appeal_needs_response",
      "appeal_under_review",
    ])
      expect(disputeState(dispute(status)).fundsWithdrawn, status).toBe(true);
  });

  it("are not once it is won, for an inquiry, or when the network prevented it (a refund instead)", () => {
    for (const status of [
      "won",
      "warning_needs_response",
      "warning_under_review",
      "warning_closed",
      "prevented",
    ])
      expect(disputeState(dispute(status)).fundsWithdrawn, status).toBe(false);
  });

  it("keeps Stripe's amount in the currency's units", () => {
    expect(disputeState(dispute("lost"))).toMatchObject({ id: "dp_1", amountCents: 5000, status: "lost" });
  });
});
