/** The emulator's in-memory state and the context every operation runs in. */

import { resourceMissing } from "./errors.js";
import type {
  EmulatorAccount,
  EventObject,
  Internal,
  Kind,
  RequestLogEntry,
  StoredRecord,
  StripeObject,
  WalletAvailability,
} from "./types.js";
import type { WebhookHub } from "./webhooks.js";

export interface KeyInfo {
  accountId: string;
  kind: "secret" | "restricted" | "publishable";
  livemode: boolean;
}

export interface IdempotencyEntry {
  /** method, path and canonical parameters of the first request. */
  fingerprint: string;
  inFlight: boolean;
  status: number;
  body: string;
  requestId: string;
}

export class Store {
  readonly accounts = new Map<string, EmulatorAccount>();
  /** `<account>:<livemode>:<Idempotency-Key>` → the first answer. */
  readonly idempotency = new Map<string, IdempotencyEntry>();
  readonly keys = new Map<string, KeyInfo>();
  readonly records = new Map<string, StoredRecord>();
  readonly events: EventObject[] = [];
  readonly requests: RequestLogEntry[] = [];

  /** Forgets every object, event and request; accounts and keys stay. */
  clearData(): void {
    this.records.clear();
    this.idempotency.clear();
    this.events.length = 0;
    this.requests.length = 0;
  }
}

export interface Env {
  store: Store;
  /** Milliseconds since the epoch. */
  clock(): number;
  apiVersion: string;
  /** `http://127.0.0.1:<port>` once listening. */
  baseUrl: string;
  /** Delay before Stripe's "shortly after" follow-ups (auto disputes, late refund failures); null: never. */
  followUpDelayMs: number | null;
  hub: WebhookHub;
  /** Runs `fn` as a new operation in `op`'s account and mode after `ms` (Stripe's "shortly after"). */
  followUp(op: Op, ms: number, fn: (later: Op) => void): void;
  wallets: WalletAvailability;
}

/** How Stripe names each kind in "No such …" errors. */
const LABELS: Record<Kind, string> = {
  customer: "customer",
  payment_method: "PaymentMethod",
  payment_intent: "payment_intent",
  setup_intent: "setupintent",
  charge: "charge",
  refund: "refund",
  dispute: "dispute",
  confirmation_token: "confirmationtoken",
  webhook_endpoint: "webhook endpoint",
  payment_method_domain: "payment method domain",
  event: "event",
};

/** One API call (or control call): the account and mode it acts in, and the events it produced. */
export class Op {
  readonly events: EventObject[] = [];
  /** Set once anything was written. */
  mutated = false;
  private readonly created: string[] = [];
  private readonly originals = new Map<string, { obj: StripeObject; internal: Internal }>();
  private readonly removed = new Map<string, StoredRecord>();

  constructor(
    readonly env: Env,
    readonly account: EmulatorAccount,
    readonly livemode: boolean,
    readonly request: { id: string | null; idempotency_key: string | null },
  ) {}

  /** Unix seconds. */
  get now(): number {
    return Math.floor(this.env.clock() / 1000);
  }

  put<T extends StripeObject>(kind: Kind, obj: T, internal: Internal = {}): StoredRecord<T> {
    const record: StoredRecord<T> = {
      kind,
      accountId: this.account.id,
      livemode: this.livemode,
      obj,
      internal,
    };
    this.env.store.records.set(obj.id, record as unknown as StoredRecord);
    this.created.push(obj.id);
    this.mutated = true;
    return record;
  }

  /** Call before changing a stored object: remembers how it was, so a failed request can be undone. */
  modify<T extends StripeObject>(record: StoredRecord<T>): T {
    const id = record.obj.id;
    if (!this.created.includes(id) && !this.originals.has(id))
      this.originals.set(id, { obj: snapshot(record.obj), internal: snapshot(record.internal) });
    this.mutated = true;
    return record.obj;
  }

  remove(id: string): void {
    const record = this.env.store.records.get(id);
    if (!record) return;
    if (!this.created.includes(id) && !this.originals.has(id))
      this.originals.set(id, { obj: snapshot(record.obj), internal: snapshot(record.internal) });
    this.removed.set(id, record);
    this.env.store.records.delete(id);
    this.mutated = true;
  }

  /**
   * Undoes everything this operation did (Stripe saves nothing when a request fails validation): objects
   * it created disappear, objects it changed get their old state back, its events are forgotten.
   */
  rollback(): void {
    const store = this.env.store;
    for (const id of this.created) store.records.delete(id);
    for (const [id, record] of this.removed) store.records.set(id, record);
    for (const [id, original] of this.originals) {
      const record = store.records.get(id);
      if (record) {
        record.obj = original.obj;
        record.internal = original.internal;
      }
    }
    const eventIds = new Set(this.events.map((e) => e.id));
    for (let i = store.events.length - 1; i >= 0; i--)
      if (eventIds.has(store.events[i].id)) store.events.splice(i, 1);
    for (const id of eventIds) store.records.delete(id);
    this.events.length = 0;
    this.created.length = 0;
    this.originals.clear();
    this.removed.clear();
    this.mutated = false;
  }

  findOptional<T extends StripeObject>(kind: Kind, id: string): StoredRecord<T> | undefined {
    const record = this.env.store.records.get(id);
    if (
      !record ||
      record.kind !== kind ||
      record.accountId !== this.account.id ||
      record.livemode !== this.livemode
    )
      return undefined;
    return record as unknown as StoredRecord<T>;
  }

  find<T extends StripeObject>(kind: Kind, id: string, param = "id"): StoredRecord<T> {
    const record = this.findOptional<T>(kind, id);
    if (!record) throw resourceMissing(LABELS[kind], id, param);
    return record;
  }

  all<T extends StripeObject>(kind: Kind): StoredRecord<T>[] {
    const out: StoredRecord<T>[] = [];
    for (const record of this.env.store.records.values()) {
      if (record.kind === kind && record.accountId === this.account.id && record.livemode === this.livemode)
        out.push(record as unknown as StoredRecord<T>);
    }
    return out;
  }

  /** Records a Stripe event (`data.object` is a snapshot of `obj` now); delivered after the operation. */
  emit(type: string, obj: StripeObject, previous?: Record<string, unknown>): EventObject {
    const event = this.env.hub.createEvent(this, type, obj, previous);
    this.events.push(event);
    return event;
  }
}

export function snapshot<T>(value: T): T {
  return structuredClone(value);
}

/** The top-level fields of `before` that differ from `after`: an event's `previous_attributes`. */
export function previousAttributes(
  before: Record<string, unknown>,
  after: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(before)) {
    if (JSON.stringify(before[key]) !== JSON.stringify(after[key])) out[key] = before[key];
  }
  return out;
}
