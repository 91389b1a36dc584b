/**
 * Events and their delivery to webhook endpoints, signed as Stripe signs them
 * (`Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>" keyed by the endpoint secret>`).
 */

import { createHmac } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { newId } from "./ids.js";
import { type Env, type Op, snapshot } from "./state.js";
import type {
  DeliveryRecord,
  EventObject,
  StoredRecord,
  StripeObject,
  WebhookEndpointObject,
} from "./types.js";

export function signPayload(payload: string, secret: string, timestampSeconds: number): string {
  const signature = createHmac("sha256", secret)
    .update(`${timestampSeconds}.${payload}`, "utf8")
    .digest("hex");
  return `t=${timestampSeconds},v1=${signature}`;
}

interface PendingDelivery {
  eventId: string;
  endpointId: string;
}

type Listener = (event: EventObject) => void;

function post(
  url: string,
  body: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ status: number; error: string | null }> {
  return new Promise((resolve) => {
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      resolve({ status: 0, error: `invalid URL ${url}` });
      return;
    }
    const lib = target.protocol === "https:" ? https : http;
    const req = lib.request(
      target,
      {
        method: "POST",
        agent: false,
        headers: { ...headers, "Content-Length": String(Buffer.byteLength(body)) },
        timeout: timeoutMs,
      },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, error: null }));
        res.on("error", (err) => resolve({ status: res.statusCode ?? 0, error: err.message }));
      },
    );
    req.on("timeout", () => req.destroy(new Error(`timed out after ${timeoutMs} ms`)));
    req.on("error", (err) => resolve({ status: 0, error: err.message }));
    req.end(body);
  });
}

export class WebhookHub {
  /** `auto`: deliver right after each answer, in order, once. `manual`: queue; tests call deliver(). */
  mode: "auto" | "manual" = "auto";
  readonly deliveries: DeliveryRecord[] = [];
  private queue: PendingDelivery[] = [];
  private chain: Promise<unknown> = Promise.resolve();
  private readonly listeners = new Set<Listener>();
  private readonly targets = new Map<string, string[]>();

  constructor(
    private readonly env: () => Env,
    private readonly timeoutMs: number,
  ) {}

  private endpointsFor(
    accountId: string,
    livemode: boolean,
    type: string,
  ): StoredRecord<WebhookEndpointObject>[] {
    const out: StoredRecord<WebhookEndpointObject>[] = [];
    for (const record of this.env().store.records.values()) {
      if (
        record.kind !== "webhook_endpoint" ||
        record.accountId !== accountId ||
        record.livemode !== livemode
      )
        continue;
      const endpoint = record.obj as WebhookEndpointObject;
      if (endpoint.status !== "enabled") continue;
      if (endpoint.enabled_events.includes("*") || endpoint.enabled_events.includes(type))
        out.push(record as unknown as StoredRecord<WebhookEndpointObject>);
    }
    return out;
  }

  createEvent(op: Op, type: string, obj: StripeObject, previous?: Record<string, unknown>): EventObject {
    const env = this.env();
    const endpoints = this.endpointsFor(op.account.id, op.livemode, type);
    const event: EventObject = {
      id: newId("evt"),
      object: "event",
      api_version: env.apiVersion,
      created: op.now,
      data: { object: snapshot(obj) as Record<string, unknown> },
      livemode: op.livemode,
      pending_webhooks: endpoints.length,
      request: { ...op.request },
      type,
    };
    if (previous && Object.keys(previous).length > 0) event.data.previous_attributes = snapshot(previous);
    env.store.events.push(event);
    env.store.records.set(event.id, {
      kind: "event",
      accountId: op.account.id,
      livemode: op.livemode,
      obj: event,
      internal: {},
    });
    this.targets.set(
      event.id,
      endpoints.map((e) => e.obj.id),
    );
    for (const listener of this.listeners) listener(event);
    return event;
  }

  /** Hands finished operations' events to delivery (auto: sent in order in the background; manual: queued). */
  dispatch(events: EventObject[]): void {
    for (const event of events) {
      for (const endpointId of this.targets.get(event.id) ?? []) {
        if (this.mode === "manual") this.queue.push({ eventId: event.id, endpointId });
        else this.chain = this.chain.then(() => this.send(event.id, endpointId)).catch(() => 0);
      }
    }
  }

  /** Events with at least one undelivered (queued) delivery, oldest first. */
  pending(): EventObject[] {
    const seen = new Set<string>();
    const out: EventObject[] = [];
    for (const item of this.queue) {
      if (seen.has(item.eventId)) continue;
      seen.add(item.eventId);
      const record = this.env().store.records.get(item.eventId);
      if (record) out.push(record.obj as EventObject);
    }
    return out;
  }

  /**
   * Delivers one event now (to its queued endpoints, or, when nothing is queued for it, to every endpoint
   * that subscribes to it again: a re-delivery). Answers the (last) receiver's HTTP status, 0 on a
   * connection failure, -1 when no endpoint wants it.
   */
  async deliver(eventId: string, endpointId?: string): Promise<number> {
    const queued = this.queue.filter(
      (item) => item.eventId === eventId && (!endpointId || item.endpointId === endpointId),
    );
    this.queue = this.queue.filter((item) => !queued.includes(item));
    let endpointIds = queued.map((item) => item.endpointId);
    if (endpointIds.length === 0) {
      const record = this.env().store.records.get(eventId);
      if (record?.kind !== "event") throw new Error(`No such event: ${eventId}`);
      const event = record.obj as EventObject;
      endpointIds = this.endpointsFor(record.accountId, record.livemode, event.type).map((e) => e.obj.id);
      if (endpointId) endpointIds = endpointIds.filter((id) => id === endpointId);
    }
    let status = -1;
    for (const id of endpointIds) status = await this.send(eventId, id);
    return status;
  }

  /** Delivers every queued event in order; answers one result per event. */
  async deliverAll(): Promise<{ eventId: string; type: string; status: number }[]> {
    const results: { eventId: string; type: string; status: number }[] = [];
    for (const event of this.pending()) {
      results.push({ eventId: event.id, type: event.type, status: await this.deliver(event.id) });
    }
    return results;
  }

  /** Forgets an event's queued deliveries: it is never delivered (unless deliver() is called for it). */
  drop(eventId: string): void {
    this.queue = this.queue.filter((item) => item.eventId !== eventId);
  }

  /** Resolves when every automatic delivery started so far has finished. */
  async idle(): Promise<void> {
    let current: Promise<unknown>;
    do {
      current = this.chain;
      await current;
    } while (current !== this.chain);
  }

  onEvent(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  reset(): void {
    this.queue = [];
    this.targets.clear();
    this.deliveries.length = 0;
  }

  private async send(eventId: string, endpointId: string): Promise<number> {
    const env = this.env();
    const eventRecord = env.store.records.get(eventId);
    const endpointRecord = env.store.records.get(endpointId);
    if (!eventRecord || !endpointRecord) return 0;
    const event = eventRecord.obj as EventObject;
    const endpoint = endpointRecord.obj as WebhookEndpointObject;
    const secret = endpointRecord.internal.secret ?? "";
    const payload = JSON.stringify(
      { ...event, api_version: endpoint.api_version ?? event.api_version },
      null,
      2,
    );
    const timestamp = Math.floor(env.clock() / 1000);
    const result = await post(
      endpoint.url,
      payload,
      {
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)",
        "Stripe-Signature": signPayload(payload, secret, timestamp),
      },
      this.timeoutMs,
    );
    if (result.status >= 200 && result.status < 300 && event.pending_webhooks > 0)
      event.pending_webhooks -= 1;
    this.deliveries.push({
      eventId,
      type: event.type,
      endpointId,
      url: endpoint.url,
      status: result.status,
      error: result.error,
      at: env.clock(),
    });
    return result.status;
  }
}
