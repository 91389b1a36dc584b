import fs from "node:fs";
import type { OpenAPIHono } from "@hono/zod-openapi";
import { bodyLimit } from "hono/body-limit";
import { ApiError, errorMessage } from "../errors.js";
import { applyProcessorEvent } from "../payments/processorEvents.js";
import { ProcessorEventError } from "../processors/port.js";
import { getOrganization } from "../store/organizations.js";
import type { AppDeps, AppEnv } from "./env.js";

/**
 * What Stripe calls: `POST /stripe/webhooks/<organizationId>` (the endpoint `org stripe` makes at Stripe),
 * verified against that organization's endpoint secret on the raw body; and the Apple Pay domain file.
 * A delivery that is not Stripe's, or too old, is refused with 400 and changes nothing; one that could
 * not be applied (Stripe unreachable for the fresh state) answers 500, so Stripe delivers it again.
 */

/** Stripe's events are small; anything far larger is not one. */
const MAX_EVENT_BYTES = 512 * 1024;

export function mountProcessorWebhooks(app: OpenAPIHono<AppEnv>, deps: AppDeps): void {
  const tooLarge = () => {
    throw new ApiError(413, `Request body too large: the limit is ${MAX_EVENT_BYTES} bytes`);
  };
  // A declared length is judged at once; a body sent in chunks (no Content-Length) is counted as it is
  // read, so a sender cannot make the server hold more than the limit.
  const limited = bodyLimit({ maxSize: MAX_EVENT_BYTES, onError: tooLarge });
  app.post("/stripe/webhooks/:organizationId", limited, async (c) => {
    const org = await getOrganization(deps.store.db, c.req.param("organizationId"));
    if (!org?.processor) throw new ApiError(404, "No Stripe account is connected for this organization");
    const raw = await c.req.text();
    const processor = deps.processors.named("stripe", org);
    if (!processor.verifyEvent) throw new ApiError(404, "This processor sends no webhooks");
    let event: ReturnType<NonNullable<typeof processor.verifyEvent>>;
    try {
      event = processor.verifyEvent(raw, c.req.header("Stripe-Signature"));
    } catch (err) {
      if (err instanceof ProcessorEventError) throw new ApiError(400, err.message);
      throw err;
    }
    try {
      const result = await applyProcessorEvent(deps, org, processor, event);
      return c.json({ received: true, result });
    } catch (err) {
      console.error(
        `Stripe event ${event.id} (${event.type}) for ${org.id} not applied: ${errorMessage(err)}`,
      );
      return c.json({ error: "The event could not be applied now; deliver it again" }, 500);
    }
  });

  // Apple Pay's domain verification file, as the operator downloaded it from Stripe.
  let association: string | null | undefined;
  app.get("/.well-known/apple-developer-merchantid-domain-association", (c) => {
    const file = deps.config.applePayDomainAssociation;
    if (association === undefined) association = file ? fs.readFileSync(file, "utf8") : null;
    if (association === null) return c.text("Not found", 404);
    return c.body(association, 200, {
      "Content-Type": "text/plain; charset=utf-8",
      "Cache-Control": "public, max-age=3600",
    });
  });
}
