import { expect } from "vitest";
import type { TestApp } from "./testApp.js";

/**
 * Asserts that a subscription's audit log holds exactly one entry: the donor (`email`) replacing a Visa
 * ending 4242 by a Mastercard ending 4444, with the methods' summaries; and that none of `tokens` (the
 * processor's payment method tokens, before and after) appears anywhere in it.
 */
export async function expectDonorCardSwap(
  t: Pick<TestApp, "request">,
  subscriptionId: string,
  email: string,
  tokens: string[],
): Promise<void> {
  const log = await t.request<{ entries: Record<string, unknown>[] }>(
    "GET",
    `/v1/audit-log?subjectId=${subscriptionId}`,
  );
  expect(log.status, log.text).toBe(200);
  expect(log.body.entries).toEqual([
    expect.objectContaining({
      actor: { type: "donor", id: email, label: email },
      action: "subscription.updated",
      subject: { type: "subscription", id: subscriptionId },
      before: { paymentMethod: { type: "card", brand: "visa", last4: "4242" } },
      after: { paymentMethod: { type: "card", brand: "mastercard", last4: "4444" } },
    }),
  ]);
  for (const token of tokens) expect(log.text).not.toContain(token);
}
