import type { TestApp, TestResponse } from "./testApp.js";

/** Test payment details of the sandbox processor: the card numbers it accepts or declines, and why. */
export const CARDS = {
  visa: "4242424242424242",
  declined: "4000000000000002",
  insufficient: "4000000000009995",
  expired: "4000000000000069",
} as const;

export const card = (number: string = CARDS.visa) => ({
  type: "card" as const,
  number,
  expMonth: 12,
  expYear: 2034,
  cvc: "123",
});

export const bank = (accountNumber = "000123456789") => ({
  type: "bank" as const,
  routingNumber: "110000000",
  accountNumber,
  accountHolder: "Ada Donor",
});

export const donor = (email = `donor-${Math.random().toString(36).slice(2, 8)}@example.org`) => ({
  firstName: "Ada",
  lastName: "Donor",
  email,
});

/** Creates a form through the API and returns its id. */
export async function createForm(t: TestApp, body: Record<string, unknown>): Promise<string> {
  const res = await t.request<{ formID: string }>("POST", "/v1/forms", { body });
  if (res.status !== 201) throw new Error(`form create failed: ${res.status} ${res.text}`);
  return res.body.formID;
}

/** POST /api/forms/{id}/checkout as a donor (no key). */
export function checkout(
  t: TestApp,
  formId: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<TestResponse> {
  return t.request("POST", `/api/forms/${formId}/checkout`, { body, key: null, headers });
}
