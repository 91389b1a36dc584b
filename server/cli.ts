import fs from "node:fs";
import { parseArgs } from "node:util";
import type { z } from "zod";
import { formatMoney } from "../shared/currency.js";
import { PERMISSIONS, type Permission } from "../shared/enums.js";
import { centsToDollars } from "../shared/money.js";
import type { FeeRate } from "../shared/pricing/fees.js";
import { emailAddress, issuesToDetails } from "../shared/schemas/common.js";
import { assignGlobalInputIds, organizationUpdateSchema } from "../shared/schemas/organization.js";
import { refundRequestSchema } from "../shared/schemas/payment.js";
import { STAFF_ROLES, type StaffRole } from "../shared/schemas/staff.js";
import { isoAt, wireTime } from "../shared/time.js";
import { checkFormsFitPage } from "./api/organization.js";
import { runBillingAt } from "./billing/run.js";
import { parseInstant } from "./billing/schedule.js";
import { composeDeps } from "./compose.js";
import { type Config, loadConfig } from "./config.js";
import { ApiError, StartupError } from "./errors.js";
import { uuid } from "./ids.js";
import { refundPayment } from "./payments/refunds.js";
import { StripeConnectError } from "./processors/stripe/connection.js";
import {
  connectOrganizationStripe,
  disconnectOrganizationStripe,
  registerOrganizationDomain,
} from "./processors/stripe/organizationStripe.js";
import { checkSealedSecrets } from "./secretsCheck.js";
import { StaffError } from "./staff/accounts.js";
import { issueSetupLink, TeamError } from "./staff/team.js";
import { resetTwoFactor } from "./staff/twoFactor.js";
import { recordAudit, recordChange, SYSTEM_ACTOR } from "./store/auditLog.js";
import { openStore, type Store } from "./store/database.js";
import { createApiKey, keyOrganizationId, listApiKeys, revokeApiKey } from "./store/keys.js";
import { LATEST_VERSION } from "./store/migrations.js";
import {
  createOrganization,
  getOrganization,
  listOrganizations,
  type Organization,
  updateOrganization,
} from "./store/organizations.js";
import { findPayment, PAYMENT_ID } from "./store/payments.js";
import { recordedPublicUrl } from "./store/settings.js";
import { presentPayment } from "./wire/payment.js";

/**
 * The command line. It reads the same settings as the server (DATABASE_URL, DATA_DIR) and works while
 * the server runs. `--json` prints one JSON object on stdout.
 */

const USAGE = `Usage: npm run --silent cli -- <command> [options] [--json]

  org create --name NAME [--sandbox]        create an organization
  org list                                  list organizations
  org set --org ID [--name NAME] [--base-urls URL,URL] [--global-custom-inputs JSON|@file.json]
          [--fee-percent 2.9] [--fee-fixed 0.30]
                                            change an organization's settings; the fee rate is what
                                            cover-fees adds (percent of the gift plus a fixed amount)
  key create --org ID [--permissions a,b] [--name NAME]
                                            create an API key (shown once), named as the dashboard
                                            lists it
  key list --org ID                         list an organization's keys (never the secrets)
  key revoke --key KEY_ID                   revoke a key at once
  user create --org ID --email E --role owner|finance|staff
                                            add a person to the organization's staff; prints their
                                            single-use set-up link (24 hours) that sets a password
                                            (again for one with no password yet: a fresh link)
  user reset-two-factor --email E           turn off a person's two-factor sign-in (TOTP and recovery
                                            codes), for one who has lost both; they sign in with their
                                            password and may enrol again
  migrate                                   bring the database schema up to date
  billing run [--as-of ISO_TIME]            one pass of recurring billing and bank settlement, as of
                                            that moment (default now), e.g. --as-of 2026-03-01T00:00:00Z
  org stripe --org ID --secret-key sk_… --publishable-key pk_… [--webhook-secret whsec_…]
                                            connect the organization's own Stripe account: the keys are
                                            checked with Stripe, the webhook endpoint is created (unless its
                                            secret is given) and PUBLIC_URL's host registered for wallets
  org stripe --org ID --register-domain HOST
                                            register another site (one that embeds the form) for wallets
  org stripe --org ID --off                 disconnect Stripe (the organization's webhook endpoint at
                                            Stripe is removed; its payments stay refundable only while
                                            connected)
  payment refund --payment PAY_ID [--amount 15] [--reason TEXT]
                                            refund a payment in full, or part of it (in its currency)

Permissions: ${PERMISSIONS.join(", ")}`;

class UsageError extends Error {}

/** Where a refused command line is told to look. */
const SEE_USAGE = "(the usage: npm run --silent cli -- --help)";

/**
 * A number as a flag takes it, written in decimal (2.9, 0.30): not `0x10`, `1e1` or a blank, which
 * Number() would also read.
 */
const DECIMAL = /^\s*\d+(\.\d+)?\s*$/;

/** An API refusal (the rule the command shares with the API) as the command's own: its words, exit 2. */
function asUsageError(err: unknown): unknown {
  return err instanceof ApiError ? new UsageError([err.message, ...(err.details ?? [])].join(": ")) : err;
}

/** `--fee-percent 2.9` (0–20, up to two decimals) and `--fee-fixed 0.30` (dollars, 0–10); undefined if neither. */
function parseFeeRate(values: Values, current: FeeRate): FeeRate | undefined {
  const percent = values["fee-percent"];
  const fixed = values["fee-fixed"];
  if (percent === undefined && fixed === undefined) return undefined;
  const exact = (raw: string, flag: string, max: number): number => {
    const n = Number(raw);
    if (!DECIMAL.test(raw) || n > max)
      throw new UsageError(`--${flag} must be a number from 0 to ${max}, got "${raw}"`);
    const hundredths = Math.round(n * 100);
    if (Math.abs(hundredths - n * 100) > 1e-6)
      throw new UsageError(`--${flag} allows at most two decimals, got "${raw}"`);
    return hundredths;
  };
  return {
    percentBps: percent === undefined ? current.percentBps : exact(percent, "fee-percent", 20),
    fixedCents: fixed === undefined ? current.fixedCents : exact(fixed, "fee-fixed", 10),
  };
}

const OPTIONS = {
  json: { type: "boolean" },
  name: { type: "string" },
  org: { type: "string" },
  key: { type: "string" },
  sandbox: { type: "boolean" },
  permissions: { type: "string" },
  "base-urls": { type: "string" },
  "global-custom-inputs": { type: "string" },
  "as-of": { type: "string" },
  "fee-percent": { type: "string" },
  "fee-fixed": { type: "string" },
  "secret-key": { type: "string" },
  "publishable-key": { type: "string" },
  "webhook-secret": { type: "string" },
  "register-domain": { type: "string" },
  off: { type: "boolean" },
  payment: { type: "string" },
  amount: { type: "string" },
  reason: { type: "string" },
  email: { type: "string" },
  role: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>["values"];

function required(values: Values, name: "name" | "org" | "key"): string {
  const value = values[name];
  if (!value?.trim()) throw new UsageError(`--${name} is required`);
  return value.trim();
}

async function requireOrg(store: Store, id: string) {
  const org = await getOrganization(store.db, id);
  if (!org) throw new UsageError(`No organization with id ${id} (see: org list)`);
  return org;
}

function parsePermissions(raw: string | undefined): Permission[] | undefined {
  if (raw === undefined) return undefined;
  const list = raw
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  const unknown = list.filter((p) => !(PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length)
    throw new UsageError(`Unknown permission ${unknown.join(", ")}; known: ${PERMISSIONS.join(", ")}`);
  if (list.length === 0) throw new UsageError("--permissions needs at least one permission");
  return [...new Set(list)] as Permission[];
}

function readJsonArg(raw: string, flag: string): unknown {
  let text = raw;
  if (raw.startsWith("@")) {
    try {
      text = fs.readFileSync(raw.slice(1), "utf8");
    } catch (err) {
      throw new UsageError(
        `--${flag}: cannot read ${raw.slice(1)} (${(err as NodeJS.ErrnoException).code ?? "error"})`,
      );
    }
  }
  try {
    return JSON.parse(text);
  } catch {
    throw new UsageError(`--${flag} must be JSON (or @file.json)`);
  }
}

type Output = { json: Record<string, unknown> | Record<string, unknown>[]; text: string };

/** `--as-of` in milliseconds; without it, the command line's clock now. */
function parseAsOf(raw: string | undefined, now: () => number): number {
  if (raw === undefined) return now();
  let at: number;
  try {
    at = parseInstant(raw.trim());
  } catch {
    throw new UsageError(
      `--as-of must be an ISO 8601 time with a time zone, such as 2026-03-01T00:00:00Z (got ${JSON.stringify(raw)})`,
    );
  }
  // A pass far ahead would date the next charges past year 9999, which no stored time can hold: the gift
  // would never be billed again. Ten years ahead covers any gift's next date worth seeing.
  const latest = now() + AS_OF_YEARS_AHEAD * 366 * 86_400_000;
  if (at < AS_OF_EARLIEST || at > latest)
    throw new UsageError(
      `--as-of must be from 2000-01-01 to ${AS_OF_YEARS_AHEAD} years from now (${new Date(latest).toISOString().slice(0, 10)}), got ${JSON.stringify(raw)}`,
    );
  return at;
}

const AS_OF_YEARS_AHEAD = 10;
const AS_OF_EARLIEST = Date.UTC(2000, 0, 1);

/** `user create`: a person on the organization's staff, with a set-up link for their password. */
async function userCreate(values: Values, store: Store, config: Config, now: () => number): Promise<Output> {
  const org = await requireOrg(store, required(values, "org"));
  const email = values.email?.trim() ?? "";
  if (!emailAddress.safeParse(email).success)
    throw new UsageError(`--email must be an e-mail address, got ${JSON.stringify(values.email ?? "")}`);
  const role = values.role?.trim().toUpperCase() ?? "";
  if (!(STAFF_ROLES as readonly string[]).includes(role))
    throw new UsageError(
      `--role must be one of owner, finance, staff, got ${JSON.stringify(values.role ?? "")}`,
    );
  try {
    const made = await issueSetupLink(store, {
      organizationId: org.id,
      email,
      role: role as StaffRole,
      publicUrl: config.publicUrl,
      nowMs: now(),
    });
    return {
      json: { userId: made.userId, setupUrl: made.setupUrl, expiresAt: made.expiresAt },
      text: `${email} is ${role.toLowerCase()} of ${org.name}.
Set-up link (single use, until ${made.expiresAt}): ${made.setupUrl}`,
    };
  } catch (error) {
    if (error instanceof StaffError || error instanceof TeamError) throw new UsageError(error.message);
    throw error;
  }
}

/** `user reset-two-factor`: the way back in for a person who lost their authenticator and recovery codes. */
async function userResetTwoFactor(values: Values, store: Store, now: () => number): Promise<Output> {
  const email = values.email?.trim() ?? "";
  if (!email) throw new UsageError("--email is required");
  try {
    const wasOn = await resetTwoFactor(store, email, now());
    return {
      json: { email, twoFactorWasOn: wasOn },
      text: wasOn
        ? `Two-factor sign-in is off for ${email}: they sign in with their password alone, and may enrol again (their organization may require it).`
        : `${email} had no two-factor sign-in; nothing changed.`,
    };
  } catch (error) {
    if (error instanceof StaffError) throw new UsageError(error.message);
    throw error;
  }
}

/** The settings `org set` changes, as its answer names them, for the audit log. */
function cliSettingsOf(org: Organization): Record<string, unknown> {
  return {
    organizationName: org.name,
    organizationBaseURLs: org.baseUrls,
    globalCustomInputs: org.globalCustomInputs,
    feePercent: org.feeRate.percentBps / 100,
    feeFixed: org.feeRate.fixedCents / 100,
  };
}

/** Every command, as `group action` (or one word). */
const COMMANDS = [
  "org create",
  "org list",
  "org set",
  "key create",
  "key list",
  "key revoke",
  "billing run",
  "org stripe",
  "payment refund",
  "user create",
  "user reset-two-factor",
  "migrate",
] as const;
type Command = (typeof COMMANDS)[number];

/** The command the positionals name; a UsageError (before any database is opened or migrated) if none. */
function commandOf(positionals: string[]): Command {
  const [group, action] = positionals;
  const key = `${group ?? ""} ${action ?? ""}`.trim();
  const known = COMMANDS.find((c) => c === key);
  if (!known) throw new UsageError(group ? `Unknown command: ${key} ${SEE_USAGE}` : USAGE);
  // A word past the command (a value whose flag was mistyped or left out) is refused, never ignored:
  // only `key revoke` takes one, the key's id.
  const extra = positionals.slice(known === "key revoke" ? 3 : 2);
  if (extra.length > 0) throw new UsageError(`Unexpected argument: ${JSON.stringify(extra[0])} ${SEE_USAGE}`);
  return known;
}

async function run(
  key: Command,
  /** The positionals: `key revoke` takes the key's id as its third. */
  command: string[],
  values: Values,
  store: Store,
  config: Config,
  now: () => number,
): Promise<Output> {
  switch (key) {
    case "org create": {
      // The name as `org set` and the API take one (cleaned, at most 200 characters).
      const body = { organizationName: required(values, "name") };
      const parsed = organizationUpdateSchema.safeParse(body);
      if (!parsed.success)
        throw new UsageError(
          issuesToDetails(parsed.error.issues, body)
            .join("; ")
            .replace(/^organizationName/, "--name"),
        );
      const org = await createOrganization(
        store.db,
        { name: parsed.data.organizationName ?? body.organizationName, sandbox: values.sandbox },
        now(),
      );
      return {
        json: { organizationId: org.id, name: org.name },
        text: `Created organization ${org.name}: ${org.id}`,
      };
    }
    case "org list": {
      const orgs = await listOrganizations(store.db);
      const rows = orgs.map((o) => ({
        organizationId: o.id,
        name: o.name,
        sandbox: o.sandbox,
        createdAt: o.createdAt,
      }));
      return {
        json: { organizations: rows },
        text: rows.map((o) => `${o.organizationId}  ${o.name}`).join("\n") || "No organizations.",
      };
    }
    case "org set": {
      const org = await requireOrg(store, required(values, "org"));
      const body: Record<string, unknown> = {};
      if (values.name !== undefined) body.organizationName = values.name;
      if (values["base-urls"] !== undefined)
        body.organizationBaseURLs = values["base-urls"]
          .split(",")
          .map((u) => u.trim())
          .filter(Boolean);
      if (values["global-custom-inputs"] !== undefined)
        body.globalCustomInputs = readJsonArg(values["global-custom-inputs"], "global-custom-inputs");
      const feeRate = parseFeeRate(values, org.feeRate);
      if (Object.keys(body).length === 0 && !feeRate)
        throw new UsageError(
          "org set needs --name, --base-urls, --global-custom-inputs, --fee-percent or --fee-fixed",
        );
      let settings: z.output<typeof organizationUpdateSchema> = {};
      if (Object.keys(body).length > 0) {
        const parsed = organizationUpdateSchema.safeParse(body);
        if (!parsed.success) throw new UsageError(issuesToDetails(parsed.error.issues, body).join("; "));
        settings = parsed.data;
      }
      const nowMs = now();
      const deps = await composeDeps(store, config, now);
      // The change and its audit-log entry (the settings that changed, by the system) are one, and refused
      // as the API refuses it when a form's hosted page would outgrow its budget.
      const updated = await store.db
        .transaction()
        .execute(async (trx) => {
          const changed = await updateOrganization(
            trx,
            org.id,
            {
              name: settings.organizationName,
              baseUrls: settings.organizationBaseURLs,
              globalCustomInputs: settings.globalCustomInputs
                ? assignGlobalInputIds(settings.globalCustomInputs, org.globalCustomInputs, uuid)
                : undefined,
              feeRate,
            },
            nowMs,
          );
          if (changed) {
            await checkFormsFitPage(deps, trx, org, changed);
            await recordChange(
              trx,
              {
                organizationId: org.id,
                actor: SYSTEM_ACTOR,
                action: "organization.updated",
                subjectType: "organization",
                subjectId: org.id,
                before: cliSettingsOf(org),
                after: cliSettingsOf(changed),
              },
              nowMs,
            );
          }
          return changed;
        })
        .catch((err: unknown) => {
          throw asUsageError(err);
        })
        .finally(() => deps.metrics.close());
      const json = {
        organizationId: org.id,
        organizationName: updated?.name,
        organizationBaseURLs: updated?.baseUrls,
        globalCustomInputs: updated?.globalCustomInputs,
        feePercent: (updated?.feeRate.percentBps ?? 0) / 100,
        feeFixed: (updated?.feeRate.fixedCents ?? 0) / 100,
      };
      return { json, text: `Updated organization ${org.id}` };
    }
    case "key create": {
      const org = await requireOrg(store, required(values, "org"));
      const nowMs = now();
      // The key and its audit-log entry (its id, prefix and permissions; never the secret) are one.
      const { key: secret, record } = await store.db.transaction().execute(async (trx) => {
        const made = await createApiKey(
          trx,
          {
            organizationId: org.id,
            sandbox: org.sandbox,
            permissions: parsePermissions(values.permissions),
            // Named as the API requires a name: without --name, for where it was made and when.
            name:
              values.name !== undefined ? keyName(values.name) : `Command line, ${isoAt(nowMs).slice(0, 10)}`,
          },
          nowMs,
        );
        const { keyId, prefix, permissions } = made.record;
        await recordAudit(
          trx,
          {
            organizationId: org.id,
            actor: SYSTEM_ACTOR,
            action: "key.created",
            subjectType: "key",
            subjectId: keyId,
            before: {},
            after: { prefix, permissions },
          },
          nowMs,
        );
        return made;
      });
      return {
        json: { key: secret, keyId: record.keyId, permissions: record.permissions },
        text: `API key (shown once, store it now): ${secret}\nkeyId: ${record.keyId}\npermissions: ${record.permissions.join(", ")}`,
      };
    }
    case "key list": {
      const org = await requireOrg(store, required(values, "org"));
      const keys = await listApiKeys(store.db, org.id);
      const rows = keys.map((k) => ({
        keyId: k.keyId,
        name: k.name,
        prefix: `${k.prefix}…`,
        permissions: k.permissions,
        createdAt: k.createdAt,
        revokedAt: k.revokedAt,
      }));
      return {
        json: { keys: rows },
        text:
          rows
            .map(
              (k) =>
                `${k.keyId}  ${k.prefix}  ${k.revokedAt ? `revoked ${k.revokedAt}` : "live"}${k.name ? `  ${k.name}` : ""}`,
            )
            .join("\n") || "No keys.",
      };
    }
    case "key revoke": {
      const keyId = values.key ?? command[2];
      if (!keyId) throw new UsageError("--key is required");
      const nowMs = now();
      const revoked = await store.db.transaction().execute(async (trx) => {
        const organizationId = await keyOrganizationId(trx, keyId);
        const done = organizationId !== undefined && (await revokeApiKey(trx, keyId, nowMs));
        if (done)
          await recordAudit(
            trx,
            {
              organizationId,
              actor: SYSTEM_ACTOR,
              action: "key.revoked",
              subjectType: "key",
              subjectId: keyId,
              before: { revokedAt: null },
              after: { revokedAt: wireTime(isoAt(nowMs)) },
            },
            nowMs,
          );
        return done;
      });
      if (!revoked) throw new UsageError(`No live key with id ${keyId}`);
      return { json: { keyId, revoked: true }, text: `Revoked ${keyId}` };
    }
    case "billing run": {
      const out = await runBillingAt(store, config, parseAsOf(values["as-of"], now));
      const { billing: b, settlement: s } = out;
      if (out.errors.length)
        throw new Error(
          `${out.errors.length} problem(s) in the billing run as of ${out.asOf}: ${out.errors.join("; ")} ` +
            `(charged ${b.charged}, failed ${b.failed}, cancelled ${b.cancelled}, ended ${b.ended}, settled ${s.completed}, bounced ${s.failed})`,
        );
      return {
        json: { asOf: out.asOf, billing: b, settlement: s },
        text:
          `Billing as of ${out.asOf}: ${b.charged} charged, ${b.failed} failed, ${b.cancelled} cancelled after failed retries, ` +
          `${b.ended} ended.\nBank settlement: ${s.completed} completed, ${s.failed} failed, ${s.pending} still pending.`,
      };
    }
    case "org stripe":
      return orgStripe(values, store, config, now);
    case "payment refund":
      return paymentRefund(values, store, config, now);
    case "user create":
      return userCreate(values, store, config, now);
    case "user reset-two-factor":
      return userResetTwoFactor(values, store, now);
    case "migrate":
      return {
        json: { schemaVersion: LATEST_VERSION },
        text: `Database schema is at version ${LATEST_VERSION}`,
      };
  }
}

/** A key's name as the API takes it: 1 to 100 characters, not blank. */
function keyName(raw: string): string {
  const name = raw.trim();
  if (name.length === 0 || name.length > 100) throw new UsageError("--name must be 1 to 100 characters");
  return name;
}

/** `org stripe`: connect, add a wallet domain, or disconnect (see the usage text). */
async function orgStripe(values: Values, store: Store, config: Config, now: () => number): Promise<Output> {
  const org = await requireOrg(store, required(values, "org"));
  // Keys sealed with another SECRETS_KEY than the server's would be unreadable to it: the organization would
  // take no payments. The server's own start-up check, first: this key must open the keys already stored.
  await checkSealedSecrets(store.db, config).catch((err: unknown) => {
    if (!(err instanceof StartupError)) throw err;
    throw new StartupError(
      `${err.message}. This command seals the new keys with the SECRETS_KEY it is given, which must be the server's`,
    );
  });
  const deps = await composeDeps(store, config, now);
  const account = { db: store.db, secrets: deps.secrets, config, now: deps.now };
  try {
    if (values.off) {
      const { disconnected, warnings } = await disconnectOrganizationStripe(account, org, SYSTEM_ACTOR);
      if (!disconnected)
        return { json: { organizationId: org.id, processor: null }, text: "Stripe was not connected." };
      return {
        json: { organizationId: org.id, processor: null, warnings },
        text: [`Disconnected Stripe from ${org.name}.`, ...warnings].join("\n"),
      };
    }
    const domain = values["register-domain"];
    if (domain !== undefined) {
      const { host, view } = await registerOrganizationDomain(account, org, domain, SYSTEM_ACTOR);
      return {
        json: { organizationId: org.id, walletDomains: view.walletDomains },
        text: `Registered ${host} for Apple Pay and Google Pay. Wallet domains: ${view.walletDomains.join(", ")}`,
      };
    }
    const secretKey = values["secret-key"]?.trim();
    const publishableKey = values["publishable-key"]?.trim();
    if (!secretKey || !publishableKey)
      throw new UsageError(
        "org stripe needs --secret-key and --publishable-key (or --off, or --register-domain)",
      );
    const webhookSecret = values["webhook-secret"]?.trim();
    const { view: s, warnings } = await connectOrganizationStripe(
      account,
      org,
      { secretKey, publishableKey, ...(webhookSecret ? { webhookSecret } : {}) },
      SYSTEM_ACTOR,
    );
    const json = {
      organizationId: org.id,
      processor: "stripe",
      mode: s.mode,
      accountId: s.accountId,
      accountName: s.accountName,
      currency: s.currency,
      webhookEndpoint: s.webhook.url,
      webhookEndpointId: s.webhook.endpointId,
      walletDomains: s.walletDomains,
      warnings,
    };
    return {
      json,
      text: [
        `Connected ${org.name} to Stripe account ${s.accountId}${s.accountName ? ` (${s.accountName})` : ""} in ${s.mode} mode.`,
        `Webhooks: ${json.webhookEndpoint}${s.webhook.endpointId ? ` (endpoint ${s.webhook.endpointId} created at Stripe)` : " (with the secret you gave)"}`,
        `Wallet domains: ${s.walletDomains.join(", ") || "none yet"}`,
        `Gifts are charged in ${org.currency} (the organization's currency; the account's default is ${s.currency}).`,
        ...warnings.map((w) => `Note: ${w}`),
      ].join("\n"),
    };
  } catch (err) {
    // Refusals are the operator's to fix: one line, exit 2 (as the keys' shapes were refused before).
    // Stripe out of reach or failing is not: one line too, exit 1 (try again later).
    if (err instanceof StripeConnectError)
      throw err.kind === "stripe" ? new Error(err.message) : new UsageError(err.message);
    throw err;
  } finally {
    await deps.metrics.close();
  }
}

/** `payment refund`: the same refund as POST /v1/payments/{id}/refund. */
async function paymentRefund(
  values: Values,
  store: Store,
  config: Config,
  now: () => number,
): Promise<Output> {
  const id = values.payment?.trim();
  if (!id) throw new UsageError("--payment is required (a payment id, pay_…)");
  const payment = PAYMENT_ID.test(id) ? await findPayment(store.db, id) : undefined;
  if (!payment) throw new UsageError(`No payment with id ${id}`);
  const org = await requireOrg(store, payment.organization_id);
  let amountCents: number | undefined;
  if (values.amount !== undefined) {
    const parsed = refundRequestSchema.shape.amount.safeParse(Number(values.amount));
    if (!DECIMAL.test(values.amount) || !parsed.success || parsed.data === undefined)
      throw new UsageError(
        `--amount must be an amount of the payment's currency (${payment.currency}) greater than 0, with at most 2 decimals, got "${values.amount}"`,
      );
    amountCents = parsed.data;
  }
  const deps = await composeDeps(store, config, now);
  try {
    const done = await refundPayment(
      deps,
      org,
      id,
      {
        ...(amountCents !== undefined && { amountCents }),
        ...(values.reason?.trim() ? { reason: values.reason.trim() } : {}),
      },
      SYSTEM_ACTOR,
    );
    const view = presentPayment(done.payment);
    if (!done.refund)
      return {
        json: { refund: null, payment: view },
        text: `Cancelled the free order ${id}: its tickets are void and its places given back.`,
      };
    return {
      json: {
        refund: {
          id: done.refund.id,
          amount: centsToDollars(done.refund.amountCents),
          status: done.refund.status,
        },
        payment: view,
      },
      text: `Refunded ${formatMoney(done.refund.amountCents, done.payment.currency)} of ${id} (${done.refund.status}); the payment is ${view.status}, ${formatMoney(Number(done.payment.refunded_cents), done.payment.currency)} refunded in all.`,
    };
  } catch (err) {
    throw asUsageError(err);
  } finally {
    await deps.metrics.close();
  }
}

async function main(): Promise<number> {
  let parsed: { values: Values; positionals: string[] };
  try {
    parsed = parseArgs({ options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    // One line: with --json the one a script reads; else the mistake and where the usage is.
    if (process.argv.includes("--json")) console.error(JSON.stringify({ error: (err as Error).message }));
    else console.error(`${(err as Error).message} ${SEE_USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  // With --json, what a script reads: the usage asked for as JSON, a missing command as its one-line error.
  if (values.help) {
    console.log(values.json ? JSON.stringify({ usage: USAGE }) : USAGE);
    return 0;
  }
  if (positionals.length === 0) {
    if (!values.json) {
      console.log(USAGE);
      return 0;
    }
    console.error(JSON.stringify({ error: `No command given ${SEE_USAGE}` }));
    return 2;
  }
  let store: Store | undefined;
  try {
    const command = commandOf(positionals);
    const config = loadConfig();
    store = await openStore(config.databaseUrl);
    // Without PUBLIC_URL of its own, links name the installation's address as its server recorded it, not
    // this process's default: a receipt of `billing run` must link to the server donors use.
    if (!config.publicUrlSet) config.publicUrl = (await recordedPublicUrl(store.db)) ?? config.publicUrl;
    // The command line's clock, from which every command dates what it writes: the wall clock (a process
    // entry, like composeDeps's default).
    const out = await run(command, positionals, values, store, config, Date.now);
    console.log(values.json ? JSON.stringify(out.json) : out.text);
    return 0;
  } catch (err) {
    const known = err instanceof UsageError || err instanceof StartupError;
    const message = known ? (err as Error).message : `Failed: ${(err as Error).message}`;
    if (values.json) console.error(JSON.stringify({ error: message }));
    else console.error(message);
    return err instanceof UsageError ? 2 : 1;
  } finally {
    await store?.close();
  }
}

main().then((code) => process.exit(code));
