import { type DispatcherOptions, WebhookDispatcher } from "../../server/webhooks/dispatcher.js";
import { setupTestApp, type TestApp } from "../support/testApp.js";
import type { Receiver } from "./receiver.js";

export interface WebhookTest {
  t: TestApp;
  dispatcher: WebhookDispatcher;
  close(): Promise<void>;
}

/**
 * The app on a fresh database with a dispatcher running on short timings (polls every 20 ms) and at most
 * 8 attempts in flight per webhook (the default is 64), so the cap shows with few events.
 */
export async function setupWebhookTest(
  opts: {
    retryScheduleMs?: number[];
    timeoutMs?: number;
    env?: Record<string, string>;
    start?: boolean;
    /** Other dispatcher settings (the in-flight caps). */
    dispatcher?: Partial<Omit<DispatcherOptions, "deps">>;
  } = {},
): Promise<WebhookTest> {
  const t = await setupTestApp({
    env: {
      CHECKOUT_LIMIT_PER_IP: "0",
      CHECKOUT_LIMIT_PER_FORM: "0",
      RATE_LIMIT_PER_HOUR: "1000000",
      ...opts.env,
    },
  });
  const dispatcher = new WebhookDispatcher({
    deps: t.deps,
    retryScheduleMs: opts.retryScheduleMs ?? [100, 100, 100],
    timeoutMs: opts.timeoutMs,
    perWebhook: 8,
    pollMs: 20,
    ...opts.dispatcher,
  });
  if (opts.start !== false) dispatcher.start(20);
  return {
    t,
    dispatcher,
    async close() {
      await dispatcher.stop();
      await t.close();
    },
  };
}

export interface Registered {
  webhookId: string;
  secret: string;
}

/** Registers a webhook through the API and hands its secret to the receiver. */
export async function register(
  t: TestApp,
  receiver: Receiver,
  events: string[],
  opts: { key?: string } = {},
): Promise<Registered> {
  const res = await t.request<Registered>("POST", "/v1/webhooks", {
    body: { url: receiver.url, events },
    key: opts.key,
  });
  if (res.status !== 201) throw new Error(`webhook registration failed: ${res.status} ${res.text}`);
  receiver.setSecret(res.body.secret);
  return res.body;
}

export interface LogRecord {
  logId: string;
  webhookId: string;
  eventId: string;
  eventType: string;
  status: string;
  httpStatus: number | null;
  responseTime: number | null;
  attempt: number;
  error: string | null;
  timestamp: number;
}

/** Every log record of a webhook (all pages), oldest first. */
export async function allLogs(t: TestApp, webhookId: string, status?: string): Promise<LogRecord[]> {
  const logs: LogRecord[] = [];
  let cursor: string | undefined;
  for (;;) {
    const q = new URLSearchParams({ webhookId, limit: "100" });
    if (status) q.set("status", status);
    if (cursor) q.set("lastEvaluatedKey", cursor);
    const res = await t.request<{ logs: LogRecord[]; hasMore: boolean; lastEvaluatedKey?: string }>(
      "GET",
      `/v1/analytics/webhook-logs?${q}`,
    );
    if (res.status !== 200) throw new Error(`webhook-logs failed: ${res.status} ${res.text}`);
    logs.push(...res.body.logs);
    if (!res.body.hasMore) break;
    cursor = res.body.lastEvaluatedKey;
  }
  return logs.reverse();
}

/** Waits until no attempt of the webhook is PENDING (outcomes are written in batches). */
export async function settled(t: TestApp, webhookId: string, timeoutMs = 5000): Promise<LogRecord[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const logs = await allLogs(t, webhookId);
    if (logs.every((l) => l.status !== "PENDING")) return logs;
    if (Date.now() > deadline) throw new Error("attempts still PENDING");
    await new Promise((r) => setTimeout(r, 20));
  }
}
