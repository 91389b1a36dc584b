/**
 * A local Stripe API emulator for tests: `startStripeEmulator()` listens on 127.0.0.1 (OS-picked port) and
 * speaks enough of Stripe's v1 API for the real `stripe` package (`new Stripe(key, { host: "127.0.0.1", port,
 * protocol: "http" })`) and for the stand-in Stripe.js it serves at `/v3/stripe.js`. State is in memory.
 * See README.md beside this file for the endpoints, test data and control API.
 */

import { readFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { closeDispute, openDispute, updateDisputeStatus } from "./disputes.js";
import { resourceMissing, StripeApiError } from "./errors.js";
import { Faults } from "./faults.js";
import { newId, randomChars } from "./ids.js";
import { Params } from "./params.js";
import {
  authenticatePaymentIntent,
  settleBankPayment,
  verifyPaymentIntentMicrodeposits,
} from "./payment-intents.js";
import { createRefund, settleRefund } from "./refunds.js";
import { ControlNotFound, createRequestHandler } from "./server.js";
import { authenticateSetupIntent, verifySetupIntentMicrodeposits } from "./setup-intents.js";
import { type Env, Op, Store, snapshot } from "./state.js";
import type {
  AccountOptions,
  DeliveryRecord,
  DisputeObject,
  EmulatorAccount,
  EventObject,
  FaultSpec,
  PaymentIntentObject,
  RefundObject,
  RequestLogEntry,
  SetupIntentObject,
  StripeObject,
  WalletAvailability,
} from "./types.js";
import { signPayload, WebhookHub } from "./webhooks.js";

export { Faults } from "./faults.js";
export { encodeForm, parseForm } from "./form.js";
export * as testData from "./test-data.js";
export type * from "./types.js";
export { signPayload } from "./webhooks.js";

/** The API version the emulator reports (the one stripe@23.1.0 pins). */
export const DEFAULT_API_VERSION = "2026-10-28.endive";

export interface StripeEmulatorOptions {
  /** Accounts to create; with none, one default test account is made. */
  accounts?: AccountOptions[];
  /** Milliseconds since the epoch (default Date.now). */
  now?: () => number;
  apiVersion?: string;
  /** Webhook delivery mode at start (default "auto"). */
  webhookMode?: "auto" | "manual";
  /** Webhook delivery timeout (default 5000 ms). */
  webhookTimeoutMs?: number;
  /**
   * Delay before Stripe's "shortly after" follow-ups: the dispute on 4000000000000259 (and bank account
   * 000555555559 once settled), the late refund failure on 4000000000005126. Default 100 ms; null: never
   * (call openDispute / settleRefund yourself).
   */
  followUpDelayMs?: number | null;
  /** Which wallets the stand-in's Express Checkout Element offers (default none). */
  wallets?: Partial<WalletAvailability>;
}

export interface WebhookControl {
  /** "auto": POSTed right after each answer, in order, once. "manual": queued until deliver()/deliverAll(). */
  mode: "auto" | "manual";
  /** Events with queued (undelivered) deliveries, oldest first. */
  pending(): EventObject[];
  /** Delivers one event now (again, if already delivered); answers the receiver's HTTP status (0: no connection). */
  deliver(eventId: string, endpointId?: string): Promise<number>;
  /** Delivers every queued event in order. */
  deliverAll(): Promise<{ eventId: string; type: string; status: number }[]>;
  /** Drops an event's queued deliveries. */
  drop(eventId: string): void;
  /** Every delivery attempt so far. */
  readonly deliveries: DeliveryRecord[];
  /** Resolves once automatic deliveries started so far are done. */
  idle(): Promise<void>;
  /** An endpoint's `whsec_…` secret (Stripe only shows it in the create answer). */
  secretFor(endpointId: string): string;
}

export interface StripeEmulator {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly host: "127.0.0.1";
  readonly port: number;
  /** Where the stand-in Stripe.js is served (`<url>/v3/stripe.js`; also `/endive/stripe.js`). */
  readonly stripeJsUrl: string;
  /** The first (or default) account. */
  readonly account: EmulatorAccount;
  readonly accounts: EmulatorAccount[];
  addAccount(opts?: AccountOptions): EmulatorAccount;
  /** Options for `new Stripe(secretKey, emulator.clientOptions())`. */
  clientOptions(): { host: string; port: number; protocol: "http"; maxNetworkRetries: 0 };

  /** Every `/v1` request, in arrival order. */
  readonly requests: RequestLogEntry[];
  /** How many requests (replays included) reached `method path` (exact path, no query). */
  countRequests(method: string, path: string): number;
  /** Every event, all accounts, oldest first. */
  readonly events: EventObject[];
  /** The first event of `type` (already emitted or coming) matching `predicate`. */
  waitForEvent(
    type: string,
    opts?: { predicate?: (event: EventObject) => boolean; timeoutMs?: number },
  ): Promise<EventObject>;
  readonly webhooks: WebhookControl;
  /** A `Stripe-Signature` header for `payload` (use any timestamp, e.g. an expired one). */
  sign(payload: string, secret: string, timestampSeconds?: number): string;
  readonly faults: Faults;
  /** Any stored object by id (a snapshot), whatever its account. */
  retrieve<T = StripeObject>(id: string): T | undefined;

  settleBankPayment(paymentIntentId: string): PaymentIntentObject;
  verifyMicrodeposits(intentId: string): PaymentIntentObject | SetupIntentObject;
  completeAuthentication(
    intentId: string,
    result: "succeed" | "fail",
  ): PaymentIntentObject | SetupIntentObject;
  openDispute(
    chargeOrPaymentIntentId: string,
    opts?: { reason?: string; amount?: number; inquiry?: boolean },
  ): DisputeObject;
  updateDispute(disputeId: string, status: string): DisputeObject;
  closeDispute(disputeId: string, outcome: "won" | "lost"): DisputeObject;
  refundFromDashboard(paymentIntentId: string, amount?: number): RefundObject;
  settleRefund(refundId: string, status: "succeeded" | "failed", failureReason?: string): RefundObject;
  setWallets(wallets: Partial<WalletAvailability>): WalletAvailability;
  readonly wallets: WalletAvailability;

  /** Forgets all objects, events, requests, idempotency keys, faults and queued webhooks (accounts stay). */
  reset(): void;
  /** Stops the server and closes every socket. */
  close(): Promise<void>;
}

const KEY_PREFIX = /^(sk|pk|rk)_(test|live)_[A-Za-z0-9_]+$/;

function str(body: Record<string, unknown>, ...names: string[]): string {
  for (const name of names) {
    const v = body[name];
    if (typeof v === "string" && v) return v;
  }
  throw new Error(`missing ${names[0]}`);
}

export async function startStripeEmulator(opts: StripeEmulatorOptions = {}): Promise<StripeEmulator> {
  const store = new Store();
  const timers = new Set<NodeJS.Timeout>();
  const faults = new Faults();
  const defaultWallets: WalletAvailability = {
    applePay: false,
    googlePay: false,
    sheet: "confirm",
    ...opts.wallets,
  };
  const accounts: EmulatorAccount[] = [];
  const clock = opts.now ?? Date.now;

  let env: Env;
  const hub = new WebhookHub(() => env, opts.webhookTimeoutMs ?? 5000);
  hub.mode = opts.webhookMode ?? "auto";

  function runOp<T>(account: EmulatorAccount, livemode: boolean, fn: (op: Op) => T): T {
    const op = new Op(env, account, livemode, { id: null, idempotency_key: null });
    try {
      const result = fn(op);
      hub.dispatch(op.events);
      return snapshot(result);
    } catch (e) {
      if (e instanceof StripeApiError && e.status === 402) hub.dispatch(op.events);
      else op.rollback();
      throw e;
    }
  }

  /** Runs a control operation in the account (and mode) that owns `id`. */
  function onObject<T>(id: string, fn: (op: Op) => T): T {
    const record = store.records.get(id);
    if (!record) throw resourceMissing("object", id);
    const account = store.accounts.get(record.accountId);
    if (!account) throw resourceMissing("account", record.accountId);
    return runOp(account, record.livemode, fn);
  }

  env = {
    store,
    clock,
    apiVersion: opts.apiVersion ?? DEFAULT_API_VERSION,
    baseUrl: "",
    followUpDelayMs: opts.followUpDelayMs === undefined ? 100 : opts.followUpDelayMs,
    hub,
    wallets: { ...defaultWallets },
    followUp(op, ms, fn) {
      const timer = setTimeout(() => {
        timers.delete(timer);
        try {
          runOp(op.account, op.livemode, fn);
        } catch (e) {
          console.warn("[stripe-emulator] follow-up failed:", (e as Error).message);
        }
      }, ms);
      timer.unref?.();
      timers.add(timer);
    },
  };

  function addAccount(o: AccountOptions = {}): EmulatorAccount {
    const id = o.id ?? newId("acct", 16);
    if (store.accounts.has(id)) throw new Error(`account ${id} already exists`);
    const mode = o.secretKey?.startsWith("sk_live_") ? "live" : "test";
    const secretKey = o.secretKey ?? `sk_${mode}_${randomChars(32)}`;
    const publishableKey = o.publishableKey ?? `pk_${mode}_${randomChars(32)}`;
    const restrictedKeys = o.restrictedKeys ?? [];
    const checks: [string, string][] = [
      [secretKey, "sk"],
      [publishableKey, "pk"],
      ...restrictedKeys.map((k): [string, string] => [k, "rk"]),
    ];
    for (const [key, prefix] of checks) {
      const m = KEY_PREFIX.exec(key);
      if (!m || m[1] !== prefix) throw new Error(`invalid ${prefix} key for account ${id}: ${key}`);
      if (store.keys.has(key)) throw new Error(`key ${key} is already used by another account`);
    }
    const account: EmulatorAccount = {
      id,
      secretKey,
      publishableKey,
      restrictedKeys,
      chargesEnabled: o.chargesEnabled ?? true,
      payoutsEnabled: o.payoutsEnabled ?? o.chargesEnabled ?? true,
      detailsSubmitted: o.detailsSubmitted ?? true,
      defaultCurrency: (o.defaultCurrency ?? "usd").toLowerCase(),
      country: o.country ?? "US",
      displayName: o.displayName ?? "Emulated Stripe account",
      businessName: o.businessName ?? o.displayName ?? "Emulated Stripe account",
      email: o.email ?? "owner@example.com",
      statementDescriptor: o.statementDescriptor ?? "EMULATOR TEST",
      created: Math.floor(clock() / 1000),
    };
    store.accounts.set(id, account);
    const livemode = (key: string) => key.includes("_live_");
    store.keys.set(secretKey, { accountId: id, kind: "secret", livemode: livemode(secretKey) });
    store.keys.set(publishableKey, {
      accountId: id,
      kind: "publishable",
      livemode: livemode(publishableKey),
    });
    for (const key of restrictedKeys)
      store.keys.set(key, { accountId: id, kind: "restricted", livemode: livemode(key) });
    accounts.push(account);
    return account;
  }

  for (const o of opts.accounts?.length ? opts.accounts : [{}]) addAccount(o);

  const control = {
    settleBankPayment: (id: string) => onObject(id, (op) => settleBankPayment(op, id)),
    verifyMicrodeposits: (id: string): PaymentIntentObject | SetupIntentObject =>
      onObject(id, (op) =>
        id.startsWith("seti_")
          ? verifySetupIntentMicrodeposits(op, id)
          : verifyPaymentIntentMicrodeposits(op, id),
      ),
    completeAuthentication: (
      id: string,
      result: "succeed" | "fail",
    ): PaymentIntentObject | SetupIntentObject => {
      if (result !== "succeed" && result !== "fail") throw new Error(`result must be "succeed" or "fail"`);
      return onObject(id, (op) =>
        id.startsWith("seti_")
          ? authenticateSetupIntent(op, id, result)
          : authenticatePaymentIntent(op, id, result),
      );
    },
    openDispute: (target: string, o: { reason?: string; amount?: number; inquiry?: boolean } = {}) =>
      onObject(target, (op) => openDispute(op, target, o)),
    updateDispute: (id: string, status: string) => onObject(id, (op) => updateDisputeStatus(op, id, status)),
    closeDispute: (id: string, outcome: "won" | "lost") => {
      if (outcome !== "won" && outcome !== "lost") throw new Error(`outcome must be "won" or "lost"`);
      return onObject(id, (op) => closeDispute(op, id, outcome));
    },
    refundFromDashboard: (id: string, amount?: number) =>
      onObject(id, (op) => {
        const raw: Record<string, string> = { payment_intent: id };
        if (amount !== undefined) raw.amount = String(amount);
        return createRefund(op, new Params(raw));
      }),
    settleRefund: (id: string, status: "succeeded" | "failed", reason?: string) => {
      if (status !== "succeeded" && status !== "failed")
        throw new Error(`status must be "succeeded" or "failed"`);
      return onObject(id, (op) => settleRefund(op, id, status, reason));
    },
    setWallets: (w: Partial<WalletAvailability>) => {
      if (w.applePay !== undefined) env.wallets.applePay = Boolean(w.applePay);
      if (w.googlePay !== undefined) env.wallets.googlePay = Boolean(w.googlePay);
      if (w.sheet === "confirm" || w.sheet === "cancel") env.wallets.sheet = w.sheet;
      return { ...env.wallets };
    },
  };

  function reset(): void {
    for (const t of timers) clearTimeout(t);
    timers.clear();
    store.clearData();
    hub.reset();
    hub.mode = opts.webhookMode ?? "auto";
    faults.clear();
    env.wallets = { ...defaultWallets };
  }

  const bool = (v: unknown) => v === true || v === "true";

  async function httpControl(name: string, method: string, body: Record<string, unknown>): Promise<unknown> {
    const get = method === "GET";
    switch (name) {
      case "wallets":
      case "setWallets":
        if (get) return { ...env.wallets };
        return control.setWallets({
          applePay: body.applePay === undefined ? undefined : bool(body.applePay),
          googlePay: body.googlePay === undefined ? undefined : bool(body.googlePay),
          sheet: body.sheet as WalletAvailability["sheet"],
        });
      case "settleBankPayment":
        return control.settleBankPayment(str(body, "paymentIntent", "payment_intent", "intent", "id"));
      case "verifyMicrodeposits":
        return control.verifyMicrodeposits(str(body, "intent", "paymentIntent", "setupIntent", "id"));
      case "completeAuthentication":
        return control.completeAuthentication(
          str(body, "intent", "paymentIntent", "setupIntent", "id"),
          str(body, "result") as "succeed" | "fail",
        );
      case "openDispute":
        return control.openDispute(str(body, "target", "charge", "paymentIntent", "payment_intent", "id"), {
          reason: typeof body.reason === "string" ? body.reason : undefined,
          amount: body.amount === undefined ? undefined : Number(body.amount),
          inquiry: bool(body.inquiry),
        });
      case "updateDispute":
        return control.updateDispute(str(body, "dispute", "id"), str(body, "status"));
      case "closeDispute":
        return control.closeDispute(str(body, "dispute", "id"), str(body, "outcome") as "won" | "lost");
      case "refundFromDashboard":
        return control.refundFromDashboard(
          str(body, "paymentIntent", "payment_intent", "id"),
          body.amount === undefined ? undefined : Number(body.amount),
        );
      case "settleRefund":
        return control.settleRefund(
          str(body, "refund", "id"),
          str(body, "status") as "succeeded" | "failed",
          typeof body.failureReason === "string" ? body.failureReason : undefined,
        );
      case "faults":
        if (!get) faults.add(body as unknown as FaultSpec);
        return faults.list();
      case "clearFaults":
        faults.clear();
        return faults.list();
      case "reset":
        reset();
        return { ok: true };
      case "events":
        return store.events;
      case "requests":
        return store.requests;
      case "webhooks/mode":
        if (!get) {
          if (body.mode !== "auto" && body.mode !== "manual")
            throw new Error(`mode must be "auto" or "manual"`);
          hub.mode = body.mode;
        }
        return { mode: hub.mode };
      case "webhooks/pending":
        return hub.pending();
      case "webhooks/deliver":
        return {
          status: await hub.deliver(str(body, "event", "eventId", "id"), body.endpoint as string | undefined),
        };
      case "webhooks/deliverAll":
        return await hub.deliverAll();
      case "webhooks/drop":
        hub.drop(str(body, "event", "eventId", "id"));
        return { ok: true };
      case "webhooks/deliveries":
        return hub.deliveries;
      default:
        throw new ControlNotFound(`Unknown emulator control: ${name}`);
    }
  }

  const server = http.createServer(
    createRequestHandler({
      env,
      faults,
      control: httpControl,
      stripeJs: () =>
        readFileSync(new URL("./stripe-js.js", import.meta.url), "utf8").replace(
          '"__STRIPE_EMULATOR_ORIGIN__"',
          JSON.stringify(env.baseUrl),
        ),
      dispatch: (op) => hub.dispatch(op.events),
    }),
  );
  // As Stripe: connections are kept for reuse (a client agent drops sockets whose hint is a second or less).
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  env.baseUrl = url;

  const webhooks: WebhookControl = {
    get mode() {
      return hub.mode;
    },
    set mode(mode) {
      hub.mode = mode;
    },
    pending: () => hub.pending(),
    deliver: (eventId, endpointId) => hub.deliver(eventId, endpointId),
    deliverAll: () => hub.deliverAll(),
    drop: (eventId) => hub.drop(eventId),
    get deliveries() {
      return hub.deliveries;
    },
    idle: () => hub.idle(),
    secretFor(endpointId) {
      const record = store.records.get(endpointId);
      if (record?.kind !== "webhook_endpoint" || !record.internal.secret)
        throw new Error(`No such webhook endpoint: ${endpointId}`);
      return record.internal.secret;
    },
  };

  return {
    url,
    host: "127.0.0.1",
    port,
    stripeJsUrl: `${url}/v3/stripe.js`,
    get account() {
      return accounts[0];
    },
    get accounts() {
      return [...accounts];
    },
    addAccount,
    clientOptions: () => ({ host: "127.0.0.1", port, protocol: "http", maxNetworkRetries: 0 }),
    get requests() {
      return store.requests;
    },
    countRequests: (method, path) =>
      store.requests.filter((r) => r.method === method.toUpperCase() && r.path === path).length,
    get events() {
      return store.events;
    },
    waitForEvent(type, o = {}) {
      const match = (e: EventObject) => e.type === type && (!o.predicate || o.predicate(e));
      const found = store.events.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          off();
          reject(new Error(`stripe emulator: no ${type} event within ${o.timeoutMs ?? 5000} ms`));
        }, o.timeoutMs ?? 5000);
        const off = hub.onEvent((e) => {
          if (!match(e)) return;
          off();
          clearTimeout(timer);
          resolve(e);
        });
      });
    },
    webhooks,
    sign: (payload, secret, timestampSeconds) =>
      signPayload(payload, secret, timestampSeconds ?? Math.floor(clock() / 1000)),
    faults,
    retrieve<T = StripeObject>(id: string): T | undefined {
      const record = store.records.get(id);
      return record ? (snapshot(record.obj) as unknown as T) : undefined;
    },
    ...control,
    get wallets() {
      return { ...env.wallets };
    },
    reset,
    async close() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}
