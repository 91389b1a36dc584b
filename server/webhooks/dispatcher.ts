import { type ExpressionBuilder, sql, type Transaction } from "kysely";
import type { EventType } from "../../shared/schemas/webhook.js";
import { isoAt } from "../../shared/time.js";
import type { AppDeps } from "../deps.js";
import { errorMessage } from "../errors.js";
import { ulid } from "../ids.js";
import { leaseColumns, newLease, RELEASED, unclaimed } from "../store/claim.js";
import type { Db } from "../store/database.js";
import { retryingLockConflicts } from "../store/lockRetry.js";
import type { Database, WebhookDeliveriesTable } from "../store/schema.js";
import type { WebhookBody, WebhookHeaders } from "./eventSchemas.js";
import type { TargetPolicy } from "./guard.js";
import {
  ATTEMPT_TIMEOUT_MS,
  type AttemptResult,
  type DeliveryAgents,
  deliveryAgents,
  postWebhook,
} from "./post.js";
import { signatureHeader } from "./signature.js";
import { closeInterruptedAttempts, pruneWebhookHistory } from "./store.js";
import { onDeliveriesQueued } from "./wake.js";

/**
 * Delivers queued webhook events: each is POSTed, signed, to its webhook's URL and retried on the configured
 * schedule until a 2xx answer or the schedule ends. Any number of processes may run one on the same database.
 *
 * A pass claims due deliveries (one short transaction: the rows get this pass's token and a lease, their
 * attempt counter goes up, and each attempt gets a PENDING log row), then posts them concurrently outside
 * any transaction; outcomes are written in batches (one transaction per batch, the next batch gathering
 * while the previous one commits). Attempts in flight in this process are capped so that slow receivers
 * hold up only their own deliveries (`Caps`): per webhook, per organization and in all, with a few slots
 * beyond the organization's and the process's shares for webhooks that have almost nothing in flight (a
 * receiver that answers at once is never held up behind others that do not answer). A claim reads only
 * due rows it may start (webhooks and organizations with no room left here are left out of the read, so
 * their backlog does not crowd out the candidates), takes them oldest first while the caps allow, and
 * claims again at once while room and due work remain. A delivery whose webhook no longer lists its kind
 * when it is claimed is cancelled instead of sent (a webhook receives only the kinds it lists, even when an
 * event was queued as its `events` changed). Claims are those of every worker (store/claim.ts): a process
 * that dies mid-attempt leaves its rows to the others once its heartbeat lapses (or its lease ends, if
 * sooner); the next claim marks the interrupted attempt FAILED and tries again: delivery is at least once.
 *
 * Polls every second (or the worker interval, if shorter) and at once when this process queues a
 * delivery, then briefly every few milliseconds, since the queuing transaction may commit a moment later.
 */

export interface DispatcherOptions {
  deps: AppDeps;
  /** Default: the configured WEBHOOK_RETRY_SCHEDULE. */
  retryScheduleMs?: number[];
  /** Longest wait for a receiver's answer; default ATTEMPT_TIMEOUT_MS. */
  timeoutMs?: number;
  /** How long a claim holds its rows; must outlast an attempt. */
  leaseMs?: number;
  /** Attempts in flight in this process beyond which only webhooks with fewer than `reserved` in flight start more. */
  concurrency?: number;
  /** Attempts in flight per webhook, whatever else is in flight. */
  perWebhook?: number;
  /** Attempts in flight per organization beyond which only its webhooks with fewer than `reserved` start more. */
  perOrganization?: number;
  /** The few attempts a webhook may have in flight beyond `concurrency` and `perOrganization`. */
  reserved?: number;
  /** Attempts in flight in this process, and per organization, beyond which nothing more starts. */
  maxInFlight?: number;
  maxPerOrganization?: number;
  /** Longest time between polls. */
  pollMs?: number;
  /** How long a kept-alive connection to a receiver stays open unused; default IDLE_SOCKET_MS (15 s). */
  idleSocketMs?: number;
  /** How often the delivery log is pruned (and attempts abandoned under cancelled deliveries closed); default hourly. */
  pruneMs?: number;
  /**
   * How soon after start the first prune runs; default a minute (then every `pruneMs`), so that a process
   * restarted more often than the interval still prunes.
   */
  firstPruneMs?: number;
  policy?: TargetPolicy;
  /** Clock of leases, due times and records; default Date.now. */
  wallClock?: () => number;
  onError?: (err: unknown, context: string) => void;
}

/** How many attempts may be in flight in one process (DispatcherOptions). */
export interface Caps {
  perWebhook: number;
  perOrganization: number;
  concurrency: number;
  reserved: number;
  maxPerOrganization: number;
  maxInFlight: number;
}

export const DEFAULT_CAPS: Caps = {
  perWebhook: 64,
  perOrganization: 128,
  concurrency: 256,
  reserved: 4,
  maxPerOrganization: 256,
  maxInFlight: 1024,
};

/**
 * Whether one more attempt of a webhook may start, given what is in flight in this process: of the
 * webhook, of its organization, in all. Within the shares (`perOrganization`, `concurrency`) any webhook
 * below `perWebhook` starts; beyond them only a webhook with fewer than `reserved` in flight does, so
 * receivers that do not answer fill the shares but never keep a webhook with little in flight waiting for
 * their time limit. Nothing starts at `maxPerOrganization` or `maxInFlight`.
 */
export function mayStart(caps: Caps, hook: number, org: number, total: number): boolean {
  if (total >= caps.maxInFlight || org >= caps.maxPerOrganization || hook >= caps.perWebhook) return false;
  return (total < caps.concurrency && org < caps.perOrganization) || hook < caps.reserved;
}

interface Claimed {
  delivery: WebhookDeliveriesTable;
  logId: string;
  token: string;
  url: string;
  /** The secrets to sign with: the webhook's current one, then the one a rotation replaced while it lasts. */
  secrets: string[];
  body: string;
}

interface Outcome {
  claimed: Claimed;
  result: AttemptResult;
  at: number;
}

const MAX_CLAIM = 100;
/** Rows read to choose a claim from. */
const MAX_CANDIDATES = 400;
const HOT_POLL_MS = 5;
const HOT_WINDOW_MS = 300;
/** After a delivery ends, claim again this soon: completions close together share one claim. */
const REFILL_DELAY_MS = 2;
const MAX_ERROR_LENGTH = 500;
/** How often the delivery log is pruned (records older than 90 days; pruneWebhookHistory). */
const PRUNE_INTERVAL_MS = 3_600_000;
/** The first prune after start: soon, but not in the burst of work a start brings. */
const FIRST_PRUNE_MS = 60_000;
/** How many times a batch of outcomes is written again after losing a race for a lock. */
const WRITE_RETRIES = 3;
/** Outcomes gather this long before they are written (one transaction for all of them). */
const WRITE_DELAY_MS = 10;

/** Adds `delta` to the count of `key`, dropping counts that reach 0. */
function count(counts: Map<string, number>, key: string, delta: number): void {
  const n = (counts.get(key) ?? 0) + delta;
  if (n > 0) counts.set(key, n);
  else counts.delete(key);
}

/** Exponential backoff with ±20% jitter, so many failures at once do not retry in lockstep. */
function jittered(ms: number): number {
  return Math.round(ms * (0.8 + Math.random() * 0.4));
}

export class WebhookDispatcher {
  private readonly deps: AppDeps;
  private readonly schedule: number[];
  private readonly timeoutMs: number;
  private readonly leaseMs: number;
  private readonly caps: Caps;
  private readonly pollMs: number;
  private readonly pruneMs: number;
  private readonly firstPruneMs: number;
  private readonly policy: TargetPolicy;
  /** This dispatcher's connections to receivers (at most `maxInFlight` busy plus a few idle). */
  private readonly agents: DeliveryAgents;
  private readonly wallClock: () => number;
  private readonly onError: (err: unknown, context: string) => void;

  private stopped = true;
  private intervalMs = 1000;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;
  private claiming: Promise<void> | undefined;
  private claimAgain = false;
  private hotUntil = 0;
  private unsubscribe: (() => void) | undefined;
  private pruner: NodeJS.Timeout | undefined;
  private readonly inFlight = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly perHook = new Map<string, number>();
  private readonly perOrg = new Map<string, number>();
  /** The organization of each webhook with attempts in flight. */
  private readonly hookOrg = new Map<string, string>();
  private outcomes: Outcome[] = [];
  private writing: Promise<void> | undefined;

  constructor(opts: DispatcherOptions) {
    this.deps = opts.deps;
    this.schedule = opts.retryScheduleMs ?? opts.deps.config.webhookRetryScheduleMs;
    this.timeoutMs = opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
    this.leaseMs = opts.leaseMs ?? this.timeoutMs + 5_000;
    this.caps = {
      perWebhook: opts.perWebhook ?? DEFAULT_CAPS.perWebhook,
      perOrganization: opts.perOrganization ?? DEFAULT_CAPS.perOrganization,
      concurrency: opts.concurrency ?? DEFAULT_CAPS.concurrency,
      reserved: opts.reserved ?? DEFAULT_CAPS.reserved,
      maxPerOrganization: opts.maxPerOrganization ?? DEFAULT_CAPS.maxPerOrganization,
      maxInFlight: opts.maxInFlight ?? DEFAULT_CAPS.maxInFlight,
    };
    this.pollMs = opts.pollMs ?? 1000;
    this.pruneMs = opts.pruneMs ?? PRUNE_INTERVAL_MS;
    this.firstPruneMs = Math.min(opts.firstPruneMs ?? FIRST_PRUNE_MS, this.pruneMs);
    this.policy = opts.policy ?? { guard: opts.deps.config.webhookTargetGuard };
    this.wallClock = opts.wallClock ?? Date.now;
    if (this.leaseMs <= this.timeoutMs) throw new RangeError("leaseMs must be longer than timeoutMs");
    if (!Object.values(this.caps).every((n) => Number.isInteger(n) && n >= 1))
      throw new RangeError("the in-flight caps must be whole numbers ≥ 1");
    if (
      this.caps.maxInFlight < this.caps.concurrency ||
      this.caps.maxPerOrganization < this.caps.perOrganization
    )
      throw new RangeError(
        "maxInFlight and maxPerOrganization must be at least concurrency and perOrganization",
      );
    this.agents = deliveryAgents({ maxInFlight: this.caps.maxInFlight, idleMs: opts.idleSocketMs });
    this.onError =
      opts.onError ??
      ((err, context) => console.error(`Almoner webhook dispatcher: ${context}: ${errorMessage(err)}`));
  }

  /** Starts polling every `min(intervalMs, pollMs)`, and at once whenever this process queues a delivery. */
  start(intervalMs: number): void {
    if (!Number.isFinite(intervalMs) || intervalMs <= 0) throw new RangeError("intervalMs must be positive");
    if (!this.stopped) return;
    this.stopped = false;
    this.intervalMs = Math.min(intervalMs, this.pollMs);
    this.unsubscribe = onDeliveriesQueued(this.deps.store, () => {
      this.hotUntil = this.wallClock() + HOT_WINDOW_MS;
      this.kick(0);
    });
    this.kick(0);
    const prune = () =>
      void pruneWebhookHistory(this.deps.store.db, this.wallClock()).catch((err) =>
        this.onError(err, "pruning the delivery log"),
      );
    this.pruner = setTimeout(() => {
      prune();
      if (!this.stopped) this.pruner = setInterval(prune, this.pruneMs).unref();
    }, this.firstPruneMs).unref();
  }

  /**
   * Stops claiming, cuts attempts in flight short (they are due again at once), waits for every write, and
   * closes the idle connections to receivers.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    // The first prune's timeout or the interval after it (Node clears either kind with either call).
    clearInterval(this.pruner);
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.claiming;
    for (const { controller } of this.inFlight.values()) controller.abort();
    await Promise.allSettled([...this.inFlight.values()].map((f) => f.done));
    while (this.writing) await this.writing;
    this.agents["http:"].destroy();
    this.agents["https:"].destroy();
  }

  /** Schedules a claim in `delayMs` unless one is already due sooner (or running: then it runs again after). */
  private kick(delayMs: number): void {
    if (this.stopped) return;
    if (this.claiming) {
      // Slots freed or work queued while a claim runs: claim again as soon as it ends.
      this.claimAgain = true;
      return;
    }
    const at = this.wallClock() + delayMs;
    if (this.timer && this.timerAt <= at) return;
    clearTimeout(this.timer);
    this.timerAt = at;
    // The timer must not keep a process (a CLI, a test) alive on its own.
    this.timer = setTimeout(() => this.runClaim(), delayMs).unref();
  }

  private runClaim(): void {
    this.timer = undefined;
    this.claimAgain = false;
    let claimedAny = false;
    this.claiming = (async () => {
      const free = Math.min(MAX_CLAIM, this.caps.maxInFlight - this.inFlight.size);
      if (free <= 0) return;
      const { batch, taken } = await this.claim(free);
      // Rows cancelled at claim time count as taken, so the due work behind them is claimed at once too.
      claimedAny = taken > 0;
      for (const claimed of batch) this.launch(claimed);
    })()
      .catch((err) => this.onError(err, "claiming deliveries"))
      .finally(() => {
        this.claiming = undefined;
        if (this.stopped) return;
        // A claim that took rows may have left more behind that may start (other webhooks' and
        // organizations', behind a backlog that reached its caps): claim again until one takes nothing. At
        // maxInFlight a completion kicks when a slot frees up.
        if (this.claimAgain || (claimedAny && this.inFlight.size < this.caps.maxInFlight)) this.kick(0);
        else if (this.wallClock() < this.hotUntil) this.kick(HOT_POLL_MS);
        else this.kick(this.intervalMs);
      });
  }

  private launch(claimed: Claimed): void {
    const { delivery } = claimed;
    const controller = new AbortController();
    count(this.perHook, delivery.webhook_id, 1);
    count(this.perOrg, delivery.organization_id, 1);
    this.hookOrg.set(delivery.webhook_id, delivery.organization_id);
    const done = this.attempt(claimed, controller.signal)
      .then((result) => this.record({ claimed, result, at: this.wallClock() }))
      .catch((err) => this.onError(err, `delivering ${delivery.id}`))
      .finally(() => {
        this.inFlight.delete(delivery.id);
        count(this.perHook, delivery.webhook_id, -1);
        count(this.perOrg, delivery.organization_id, -1);
        if (!this.perHook.has(delivery.webhook_id)) this.hookOrg.delete(delivery.webhook_id);
        this.kick(REFILL_DELAY_MS);
      });
    this.inFlight.set(delivery.id, { controller, done });
  }

  private attempt(claimed: Claimed, signal: AbortSignal): Promise<AttemptResult> {
    const timestamp = Math.floor(this.wallClock() / 1000);
    // The documented headers (eventSchemas.ts); postWebhook adds User-Agent.
    const headers: Omit<WebhookHeaders, "User-Agent"> = {
      "X-Webhook-ID": claimed.delivery.event_id,
      "X-Webhook-Timestamp": String(timestamp),
      "X-Webhook-Signature": signatureHeader(claimed.secrets, timestamp, claimed.body),
    };
    return postWebhook(claimed.url, { "Content-Type": "application/json", ...headers }, claimed.body, {
      timeoutMs: this.timeoutMs,
      policy: this.policy,
      signal,
      agents: this.agents,
    });
  }

  // ---------------------------------------------------------------------------------------------
  // Claiming

  private due(nowIso: string, full: { hooks: string[]; orgs: string[] }) {
    return (eb: ExpressionBuilder<Database, "webhook_deliveries">) =>
      eb.and([
        eb("status", "=", "PENDING"),
        eb("next_attempt_at", "<=", nowIso),
        unclaimed(eb, nowIso),
        eb(
          "webhook_id",
          "in",
          eb.selectFrom("webhooks").select("webhooks.id").where("webhooks.status", "=", "ACTIVE"),
        ),
        ...(full.hooks.length ? [eb("webhook_id", "not in", full.hooks)] : []),
        ...(full.orgs.length ? [eb("organization_id", "not in", full.orgs)] : []),
      ]);
  }

  /**
   * The webhooks and organizations none of whose due rows may start now (`mayStart`), to leave out of a
   * claim's read. One with nothing in flight here may always start one (short of `maxInFlight`, which
   * stops the claim before it reads), so only some of those with attempts in flight are named.
   */
  private full(): { hooks: string[]; orgs: string[] } {
    const total = this.inFlight.size;
    const orgs = new Set<string>();
    for (const [org, n] of this.perOrg) if (!mayStart(this.caps, 0, n, total)) orgs.add(org);
    const hooks: string[] = [];
    for (const [hook, n] of this.perHook) {
      const org = this.hookOrg.get(hook) ?? "";
      if (!orgs.has(org) && !mayStart(this.caps, n, this.perOrg.get(org) ?? 0, total)) hooks.push(hook);
    }
    return { hooks, orgs: [...orgs] };
  }

  /**
   * Claims at most `limit` due deliveries that may start (`mayStart`), oldest first; `taken` counts the
   * rows claimed, those cancelled because their webhook no longer lists their kind included.
   */
  private async claim(limit: number): Promise<{ batch: Claimed[]; taken: number }> {
    const db = this.deps.store.db;
    const nowMs = this.wallClock();
    const nowIso = isoAt(nowMs);
    const lease = newLease(this.deps.processId, nowMs, this.leaseMs);
    const { token } = lease;
    const due = this.due(nowIso, this.full());
    const set = {
      ...leaseColumns(lease),
      attempts: sql<number>`attempts + 1`,
      updated_at: nowIso,
    };
    // Candidates, oldest first (an index range); then, in that order, those the caps let start, counting
    // each one taken, so a backlog of one receiver leaves room for the others.
    const candidates = (q: Db) =>
      q
        .selectFrom("webhook_deliveries")
        .select(["id", "webhook_id", "organization_id"])
        .where(due)
        .orderBy("next_attempt_at")
        .orderBy("id")
        .limit(Math.min(MAX_CANDIDATES, limit * 4));
    const pick = (rows: { id: string; webhook_id: string; organization_id: string }[]): string[] => {
      const hooks = new Map(this.perHook);
      const orgs = new Map(this.perOrg);
      const wanted: string[] = [];
      for (const c of rows) {
        const total = this.inFlight.size + wanted.length;
        if (!mayStart(this.caps, hooks.get(c.webhook_id) ?? 0, orgs.get(c.organization_id) ?? 0, total))
          continue;
        count(hooks, c.webhook_id, 1);
        count(orgs, c.organization_id, 1);
        wanted.push(c.id);
        if (wanted.length === limit) break;
      }
      return wanted;
    };
    const postgres = this.deps.store.dialect === "postgres";
    // SQLite: read without locks, then claim in one UPDATE (one statement is one write; `due` is checked again in it).
    const unlocked = postgres ? [] : pick(await candidates(db).execute());
    if (!postgres && unlocked.length === 0) return { batch: [], taken: 0 };

    const logIdOf = new Map<string, string>();
    const claim = await db.transaction().execute(async (trx) => {
      let wanted = unlocked;
      if (postgres) {
        // Lock the candidates, skipping rows other processes hold, then claim exactly the chosen ones (see
        // server/billing/worker.ts for why not one UPDATE … IN (SELECT … FOR UPDATE SKIP LOCKED)). The
        // locks on candidates not chosen end with this short transaction.
        wanted = pick(await candidates(trx).forUpdate().skipLocked().execute());
        if (wanted.length === 0) return { rows: [], hooks: [], taken: 0 };
      }
      const claimed = await trx
        .updateTable("webhook_deliveries")
        .set(set)
        .where("id", "in", wanted)
        .where(due)
        .returningAll()
        .execute();
      if (claimed.length === 0) return { rows: [], hooks: [], taken: 0 };
      // The webhooks as they are now, committed: a delivery of a kind its webhook no longer lists is
      // cancelled (it was queued as its `events` changed), not sent.
      const hooks = await trx
        .selectFrom("webhooks")
        .select(["id", "url", "events", "secret", "previous_secret", "previous_secret_expires_at"])
        .where("id", "in", [...new Set(claimed.map((r) => r.webhook_id))])
        .execute();
      const listed = new Map(hooks.map((h) => [h.id, new Set<string>(JSON.parse(h.events))]));
      const isListed = (r: WebhookDeliveriesTable) => listed.get(r.webhook_id)?.has(r.event_type) === true;
      const rows = claimed.filter(isListed);
      const dropped = claimed.filter((r) => !isListed(r)).map((r) => r.id);
      // Interrupted attempts are closed before this claim's own attempts are logged.
      await this.closeInterrupted(trx, claimed, nowIso);
      // Cancelled without an attempt: the claim's increment is undone.
      if (dropped.length)
        await trx
          .updateTable("webhook_deliveries")
          .set({ status: "CANCELLED", attempts: sql<number>`attempts - 1`, ...RELEASED, updated_at: nowIso })
          .where("id", "in", dropped)
          .where("claim_token", "=", token)
          .execute();
      if (rows.length === 0) return { rows, hooks, taken: claimed.length };
      await trx
        .insertInto("webhook_logs")
        .values(
          rows.map((r) => ({
            id: `log_${ulid(nowMs)}`,
            organization_id: r.organization_id,
            webhook_id: r.webhook_id,
            delivery_id: r.id,
            event_id: r.event_id,
            event_type: r.event_type,
            status: "PENDING",
            http_status: null,
            response_time_ms: null,
            attempt: Number(r.attempts),
            error: null,
            response_body: null,
            created_at: nowIso,
          })),
        )
        .returning(["id", "delivery_id"])
        .execute()
        .then((logs) => {
          for (const log of logs) logIdOf.set(log.delivery_id, log.id);
        });
      return { rows, hooks, taken: claimed.length };
    });
    const { rows, hooks, taken } = claim;
    if (rows.length === 0) return { batch: [], taken };
    rows.sort((a, b) => a.next_attempt_at.localeCompare(b.next_attempt_at) || a.id.localeCompare(b.id));

    const events = await db
      .selectFrom("outbox_events")
      .select(["id", "type", "data", "created_at"])
      .where("id", "in", [...new Set(rows.map((r) => r.event_id))])
      .execute();
    // A rotated-out secret's overlap is judged by the app's clock, which set its end (api/webhooks.ts).
    const overlapIso = isoAt(this.deps.now());
    const eventById = new Map(events.map((e) => [e.id, e]));
    const hookById = new Map(hooks.map((h) => [h.id, h]));
    const batch = rows.flatMap((delivery) => {
      const event = eventById.get(delivery.event_id);
      const hook = hookById.get(delivery.webhook_id);
      const logId = logIdOf.get(delivery.id);
      if (!event || !hook || !logId) return [];
      // The documented body (eventSchemas.ts); `data` is the stored JSON of the resource, spliced in as is.
      const head: Omit<WebhookBody, "data"> = {
        id: event.id,
        event: event.type as EventType,
        createdAt: Math.floor(Date.parse(event.created_at) / 1000),
      };
      const body = `${JSON.stringify(head).slice(0, -1)},"data":${event.data}}`;
      const secrets = [hook.secret];
      if (hook.previous_secret && (hook.previous_secret_expires_at ?? "") > overlapIso)
        secrets.push(hook.previous_secret);
      return [{ delivery, logId, token, url: hook.url, secrets, body }];
    });
    return { batch, taken };
  }

  /** Attempts whose process died before recording an outcome: FAILED in the log and in the counts. */
  private async closeInterrupted(
    trx: Transaction<Database>,
    claimed: WebhookDeliveriesTable[],
    nowIso: string,
  ): Promise<void> {
    const retried = claimed.filter((r) => Number(r.attempts) > 1).map((r) => r.id);
    await closeInterruptedAttempts(trx, retried, nowIso);
  }

  // ---------------------------------------------------------------------------------------------
  // Recording outcomes

  /** Resolves once the outcome is stored; outcomes arriving within a few milliseconds share a transaction. */
  private record(outcome: Outcome): Promise<void> {
    this.outcomes.push(outcome);
    this.writing ??= new Promise<void>((resolve) => setTimeout(resolve, WRITE_DELAY_MS)).then(() =>
      this.writeAll(),
    );
    return this.writing;
  }

  private async writeAll(): Promise<void> {
    while (this.outcomes.length) {
      const batch = this.outcomes;
      this.outcomes = [];
      try {
        await retryingLockConflicts(() => this.write(batch), WRITE_RETRIES, WRITE_DELAY_MS);
      } catch (err) {
        if (batch.length === 1) {
          // The row keeps its claim and is attempted again once the lease ends.
          this.onError(err, "recording a delivery outcome");
          continue;
        }
        // One outcome the database refuses must not hold the others back (other webhooks', other
        // organizations'): each is written on its own.
        for (const outcome of batch)
          await retryingLockConflicts(() => this.write([outcome]), WRITE_RETRIES, WRITE_DELAY_MS).catch(
            (one) => this.onError(one, "recording a delivery outcome"),
          );
      }
    }
    this.writing = undefined;
  }

  /**
   * One transaction per batch, a few statements whatever its size: logs, successes, then each failure. On
   * PostgreSQL in the webhook tables' lock order (store.ts): the batch's delivery rows first, in id order,
   * then their logs, then the webhooks' rows in id order.
   */
  private async write(batch: Outcome[]): Promise<void> {
    const byDelivery = (a: Outcome, b: Outcome) => a.claimed.delivery.id.localeCompare(b.claimed.delivery.id);
    const succeeded = batch.filter((o) => o.result.ok);
    const failed = batch.filter((o) => !o.result.ok).sort(byDelivery);
    const postgres = this.deps.store.dialect === "postgres";
    await this.deps.store.db.transaction().execute(async (trx) => {
      // Each statement below would otherwise lock its rows in an order of its own (the successes' in the
      // order the update finds them), so a change of the API locking them in id order could wait for one
      // of them while holding another this waits for.
      if (postgres)
        await trx
          .selectFrom("webhook_deliveries")
          .select("id")
          .where("id", "in", [...new Set(batch.map((o) => o.claimed.delivery.id))])
          .orderBy("id")
          .forUpdate()
          .execute();
      // A log row no longer PENDING was closed as an interrupted failure (and counted) after this claim
      // lapsed, by another process's claim or the prune: the answer that came after all replaces it, and
      // the counts move from that failure to this outcome, so no attempt is counted twice. (Both of those
      // lock the delivery rows first, as this did above: the rows read here are settled.)
      const closed = new Set(
        (
          await trx
            .selectFrom("webhook_logs")
            .select("id")
            .where(
              "id",
              "in",
              batch.map((o) => o.claimed.logId),
            )
            .where("status", "!=", "PENDING")
            .execute()
        ).map((r) => r.id),
      );
      const perHook = new Map<string, { ok: number; failed: number; last: number }>();
      for (const { claimed, result, at } of batch) {
        const tally = perHook.get(claimed.delivery.webhook_id) ?? { ok: 0, failed: 0, last: 0 };
        if (closed.has(claimed.logId)) tally.failed--;
        if (result.ok) tally.ok++;
        else tally.failed++;
        tally.last = Math.max(tally.last, at);
        perHook.set(claimed.delivery.webhook_id, tally);
      }
      // The attempts' log rows, completed (written whole: an upsert is one statement on both databases).
      await trx
        .insertInto("webhook_logs")
        .values(
          batch.map(({ claimed: { delivery, logId }, result }) => ({
            id: logId,
            organization_id: delivery.organization_id,
            webhook_id: delivery.webhook_id,
            delivery_id: delivery.id,
            event_id: delivery.event_id,
            event_type: delivery.event_type,
            status: result.ok ? "SUCCESS" : "FAILED",
            http_status: result.httpStatus,
            response_time_ms: result.responseTimeMs,
            attempt: Number(delivery.attempts),
            // Without NUL characters, which PostgreSQL text cannot hold (a receiver's answer may have them).
            error:
              result.error === null ? null : result.error.replaceAll("\0", "").slice(0, MAX_ERROR_LENGTH),
            response_body: result.responseBody === null ? null : result.responseBody.replaceAll("\0", ""),
            created_at: delivery.updated_at,
          })),
        )
        .onConflict((oc) =>
          oc.column("id").doUpdateSet((eb) => ({
            status: eb.ref("excluded.status"),
            http_status: eb.ref("excluded.http_status"),
            response_time_ms: eb.ref("excluded.response_time_ms"),
            error: eb.ref("excluded.error"),
            response_body: eb.ref("excluded.response_body"),
          })),
        )
        .execute();
      // Only rows still held by the claim that attempted them (not cancelled or re-claimed meanwhile).
      if (succeeded.length)
        await trx
          .updateTable("webhook_deliveries")
          .set({
            status: "SUCCESS",
            ...RELEASED,
            updated_at: isoAt(this.wallClock()),
          })
          .where((eb) =>
            eb(
              eb.refTuple("id", "claim_token"),
              "in",
              succeeded.map((o) => eb.tuple(o.claimed.delivery.id, o.claimed.token)),
            ),
          )
          .where("status", "=", "PENDING")
          .execute();
      for (const { claimed, result, at } of failed) {
        const { delivery } = claimed;
        // An attempt cut short by this process stopping is due again at once.
        const wait = result.interrupted ? 0 : this.schedule[Number(delivery.attempts) - 1];
        await trx
          .updateTable("webhook_deliveries")
          .set({
            status: wait === undefined ? "FAILED" : "PENDING",
            next_attempt_at: wait === undefined ? delivery.next_attempt_at : isoAt(at + jittered(wait)),
            ...RELEASED,
            updated_at: isoAt(at),
          })
          .where("id", "=", delivery.id)
          .where("claim_token", "=", claimed.token)
          .where("status", "=", "PENDING")
          .execute();
      }
      // The last attempt stays the latest recorded: another process may have recorded a later one first.
      for (const [webhookId, tally] of [...perHook].sort(([a], [b]) => a.localeCompare(b))) {
        const last = isoAt(tally.last);
        await trx
          .updateTable("webhooks")
          .set((eb) => ({
            success_count: eb("success_count", "+", tally.ok),
            failure_count: eb("failure_count", "+", tally.failed),
            last_delivery_at: eb
              .case()
              .when(eb.or([eb("last_delivery_at", "is", null), eb("last_delivery_at", "<", last)]))
              .then(last)
              .else(eb.ref("last_delivery_at"))
              .end(),
          }))
          .where("id", "=", webhookId)
          .execute();
      }
    });
  }
}
