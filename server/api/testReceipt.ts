import { z } from "zod";
import { emailKey } from "../../shared/email.js";
import { emailAddress } from "../../shared/schemas/common.js";
import { ApiError } from "../errors.js";
import { countAgainstLimit } from "../overLimit.js";
import { queueTestReceipt } from "../payments/testReceipt.js";
import type { AppDeps } from "./env.js";
import { loadCallerOrganization } from "./organization.js";
import { defineRoute, errorSchema, type RouteSpec, standardErrors } from "./route.js";

/** "Send a test receipt": a sample receipt with the organization's settings, to see what donors get. */

/** Test receipts an organization may send in a rolling hour. */
export const TEST_RECEIPTS_PER_HOUR = 10;

const testReceiptSchema = z.strictObject({
  to: emailAddress.optional().meta({
    description:
      "Where it goes. With a staff session, the signed-in person's own address (the default); with an API key, any address, and required",
  }),
});

const queuedSchema = z.object({
  message: z.string(),
  emailId: z.string().meta({ description: "The queued e-mail's id (`eml_…`)" }),
  to: z.string().meta({ description: "The address it goes to" }),
});

export function testReceiptRoutes(deps: AppDeps): RouteSpec[] {
  return [
    defineRoute({
      method: "post",
      path: "/v1/organization/test-receipt",
      operationId: "sendTestReceipt",
      permission: "organization:write",
      tags: ["Organization"],
      summary: "Send a test receipt",
      description: `Queues a sample receipt, as a donor would get it from a form without custom e-mail settings: the organization's name, language, currency, logo, colour and receipt defaults (\`receiptReplyTo\`, \`receiptSubject\`, \`receiptMessage\`), a made-up donor and gift of 50 in the organization's currency, and "[TEST]" (in the organization's language) in the subject and a notice at the top of the body. A staff session sends it to the signed-in person (\`to\`, when given, must be their own address: a 400 otherwise); an API key must give \`to\`, any address. It names no payment and changes nothing. At most ${TEST_RECEIPTS_PER_HOUR} an hour per organization: past that, 429 with Retry-After.`,
      body: testReceiptSchema,
      bodyOptional: true,
      rules: [
        {
          fields: ["to"],
          rule: "to is required with an API key (a staff session's default is its own address)",
        },
        {
          fields: ["to"],
          rule: "with a staff session, to is the signed-in person's own address",
        },
      ],
      responses: {
        202: { description: "Queued: the mail worker sends it within moments", schema: queuedSchema },
        ...standardErrors,
        429: {
          description: `More than ${TEST_RECEIPTS_PER_HOUR} test receipts in an hour, or the key's rate limit`,
          schema: errorSchema,
        },
      },
      handler: async (c, { body }) => {
        const { organizationId, actor } = c.get("auth");
        // A person signed in to the dashboard tests the receipt on themselves, never on someone else.
        if (actor.type === "staff" && body.to !== undefined && emailKey(body.to) !== emailKey(actor.email))
          throw ApiError.validation([
            `to: a test receipt from the dashboard goes to your own address (${actor.email})`,
          ]);
        const to = body.to ?? (actor.type === "staff" ? actor.email : undefined);
        if (!to)
          throw ApiError.validation([
            "to is required with an API key: the address to send the test receipt to",
          ]);
        const org = await loadCallerOrganization(deps, organizationId);
        await countAgainstLimit(
          deps,
          `test-receipt:${organizationId}`,
          TEST_RECEIPTS_PER_HOUR,
          `At most ${TEST_RECEIPTS_PER_HOUR} test receipts an hour: try again later`,
        );
        const emailId = await queueTestReceipt(deps.store.db, org, to, {
          nowMs: deps.now(),
          publicUrl: deps.config.publicUrl,
        });
        return c.json({ message: `A test receipt is queued for ${to}`, emailId, to }, 202);
      },
    }),
  ];
}
