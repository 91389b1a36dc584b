/** Webhook endpoints: where an account's events are POSTed, each with its own `whsec_…` signing secret. */

import { invalidParam, missingParam } from "./errors.js";
import { newId, randomChars } from "./ids.js";
import { page } from "./objects.js";
import { mergeMetadata, type Params } from "./params.js";
import type { Op } from "./state.js";
import type { WebhookEndpointObject } from "./types.js";

function checkUrl(url: string): void {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === "http:" || parsed.protocol === "https:") return;
  } catch {
    // falls through
  }
  throw invalidParam("url", `Invalid URL: ${url}`);
}

function readEvents(p: Params): string[] | undefined {
  const events = p.list("enabled_events");
  if (events === undefined) return undefined;
  if (events.length === 0) throw missingParam("enabled_events");
  for (const type of events) {
    if (type !== "*" && !/^[a-z_]+(\.[a-z_]+)+$/.test(type))
      throw invalidParam("enabled_events", `Invalid event type: ${type}`);
  }
  return events;
}

export function createWebhookEndpoint(op: Op, p: Params): WebhookEndpointObject {
  const url = p.reqStr("url");
  checkUrl(url);
  const events = readEvents(p);
  if (!events) throw missingParam("enabled_events");
  const secret = `whsec_${randomChars(32)}`;
  const endpoint: WebhookEndpointObject = {
    id: newId("we"),
    object: "webhook_endpoint",
    api_version: p.strOrNull("api_version") ?? null,
    application: null,
    created: op.now,
    description: p.strOrNull("description") ?? null,
    enabled_events: events,
    livemode: op.livemode,
    metadata: p.metadata() ?? {},
    status: "enabled",
    url,
  };
  op.put("webhook_endpoint", endpoint, { secret });
  // The secret is only in the answer to the create call.
  return { ...endpoint, secret };
}

export function retrieveWebhookEndpoint(op: Op, id: string): WebhookEndpointObject {
  return op.find<WebhookEndpointObject>("webhook_endpoint", id).obj;
}

export function listWebhookEndpoints(op: Op, p: Params): Record<string, unknown> {
  return page(
    op.all<WebhookEndpointObject>("webhook_endpoint").map((r) => r.obj),
    p,
    "/v1/webhook_endpoints",
  );
}

export function updateWebhookEndpoint(op: Op, id: string, p: Params): WebhookEndpointObject {
  const record = op.find<WebhookEndpointObject>("webhook_endpoint", id);
  const endpoint = op.modify(record);
  const url = p.str("url");
  if (url !== undefined) {
    checkUrl(url);
    endpoint.url = url;
  }
  const events = readEvents(p);
  if (events) endpoint.enabled_events = events;
  const description = p.strOrNull("description");
  if (description !== undefined) endpoint.description = description;
  const disabled = p.bool("disabled");
  if (disabled !== undefined) endpoint.status = disabled ? "disabled" : "enabled";
  endpoint.metadata = mergeMetadata(endpoint.metadata, p.metadata());
  return endpoint;
}

export function deleteWebhookEndpoint(op: Op, id: string): Record<string, unknown> {
  op.find<WebhookEndpointObject>("webhook_endpoint", id);
  op.remove(id);
  return { id, object: "webhook_endpoint", deleted: true };
}
