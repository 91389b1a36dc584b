import { cloneElement } from "preact";
import { useEffect, useState } from "preact/hooks";
import { CURRENCIES } from "../../../shared/currency.js";
import { LANGUAGE_NAMES, LANGUAGES } from "../../../shared/languages.js";
import { call, detailsAbout, detailsOf, fieldOf, get } from "../api.js";
import { when } from "../format.js";
import { can, loadMe, me } from "../session.js";
import { ConfirmInline, ErrorNote, messageOf, Notice, PageTitle } from "../ui.js";

/**
 * The organization's settings: its name, the sites allowed to embed forms and open the overlay, logo,
 * colour, time zone, currency and language, the receipt's reply-to, subject and message with a test receipt
 * sent to oneself; and the payment processor (Stripe connected, checked and disconnected from here, its
 * secret never shown again). Owners change them; others read them.
 */

interface Organization {
  organizationName: string;
  organizationBaseURLs: string[];
  timeZone: string;
  currency: string;
  language: string;
  logoUrl: string | null;
  brandColor: string | null;
  receiptReplyTo: string | null;
  receiptSubject: string | null;
  receiptMessage: string | null;
  requireTwoFactor: boolean;
}

interface Payments {
  processor: string | null;
  mode: string;
  stripe: null | {
    mode: string;
    accountId: string | null;
    accountName: string | null;
    publishableKey: string;
    secretKeyHint: string;
    walletDomains: string[];
    connectedAt: string | null;
  };
  warnings?: string[];
}

const FIELDS: (keyof Organization)[] = [
  "organizationName",
  "organizationBaseURLs",
  "timeZone",
  "currency",
  "language",
  "logoUrl",
  "brandColor",
  "receiptReplyTo",
  "receiptSubject",
  "receiptMessage",
  "requireTwoFactor",
];

export default function Settings() {
  const [org, setOrg] = useState<Organization | null>(null);
  const [draft, setDraft] = useState<Organization | null>(null);
  const [details, setDetails] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const writable = can("organization:write");

  useEffect(() => {
    get<Organization>("/v1/organization")
      .then((o) => {
        setOrg(o);
        setDraft(o);
      })
      .catch((err: unknown) => setError(messageOf(err)));
  }, []);
  if (!draft || !org)
    return (
      <>
        <PageTitle title="Settings">Settings</PageTitle>
        <ErrorNote message={error} />
        {!error && <p aria-busy="true">Loading…</p>}
      </>
    );

  // An edit after "Saved." makes that word stale: it goes until the next save.
  const set = <K extends keyof Organization>(field: K, value: Organization[K]) => {
    setNotice(null);
    setDraft({ ...draft, [field]: value });
  };
  const text = (field: keyof Organization) => String(draft[field] ?? "");
  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setNotice(null);
    setDetails([]);
    const changed: Record<string, unknown> = {};
    for (const field of FIELDS)
      if (JSON.stringify(draft[field]) !== JSON.stringify(org[field]))
        changed[field] = draft[field] === "" ? null : draft[field];
    if (Object.keys(changed).length === 0) {
      setNotice("Nothing to save.");
      return;
    }
    try {
      const saved = await call<Organization>("PUT", "/v1/organization", changed);
      setOrg(saved);
      setDraft(saved);
      setNotice("Saved.");
      await loadMe();
    } catch (err) {
      const found = detailsOf(err);
      setDetails(found);
      // Problems with fields are shown at them (and named here): one sentence, not the server's run-on list.
      setError(
        found.length > 0
          ? "The settings were not saved: fix the problems shown at their fields."
          : messageOf(err),
      );
      // Once drawn, the first field marked takes the focus (the sentence above is announced as an alert).
      setTimeout(() => document.querySelector<HTMLElement>('.editor [aria-invalid="true"]')?.focus());
    }
  };
  /** Problems the page has no field for, listed under the message. */
  const elsewhere = details.filter((d) => !(FIELDS as string[]).includes(fieldOf(d)));

  // A field with problems is marked invalid and described by them, after its hint.
  const field = (name: keyof Organization, label: string, control: preact.JSX.Element, hint?: string) => {
    const problems = detailsAbout(details, name);
    const hintId = hint ? `org-${name}-hint` : undefined;
    const errorId = problems.length > 0 ? `org-${name}-error` : undefined;
    return (
      <div class="field">
        <label for={`org-${name}`}>{label}</label>
        {cloneElement(control, {
          "aria-invalid": problems.length > 0 ? "true" : undefined,
          "aria-describedby": [hintId, errorId].filter(Boolean).join(" ") || undefined,
        })}
        {hint && (
          <small id={hintId} class="hint">
            {hint}
          </small>
        )}
        {errorId && (
          <ul id={errorId} class="error field-errors">
            {problems.map((d) => (
              <li key={d}>{d}</li>
            ))}
          </ul>
        )}
      </div>
    );
  };
  const input = (name: keyof Organization, type = "text") => (
    <input
      id={`org-${name}`}
      type={type}
      disabled={!writable}
      value={text(name)}
      onInput={(e) => set(name, e.currentTarget.value as never)}
    />
  );

  return (
    <>
      <PageTitle title="Settings">Settings</PageTitle>
      {!writable && (
        <p class="notice" id="settings-read-only">
          Your role may read the organization's settings, not change them: ask an Owner for changes.
        </p>
      )}
      <form class="editor" onSubmit={save} aria-label="The organization's settings">
        <h2>Organization</h2>
        {field("organizationName", "Name", input("organizationName"))}
        {field(
          "organizationBaseURLs",
          "Your sites",
          <textarea
            id="org-organizationBaseURLs"
            rows={3}
            disabled={!writable}
            value={draft.organizationBaseURLs.join("\n")}
            onInput={(e) =>
              set(
                "organizationBaseURLs",
                e.currentTarget.value
                  .split("\n")
                  .map((u) => u.trim())
                  .filter(Boolean),
              )
            }
          />,
          "One https address per line: the sites that may embed your forms and open them over their pages.",
        )}
        {field("logoUrl", "Logo (https address of an image)", input("logoUrl", "url"))}
        {field("brandColor", "Colour", input("brandColor"), "#RRGGBB, e.g. #1A7F5A")}
        {field(
          "timeZone",
          "Time zone",
          input("timeZone"),
          "An IANA name such as America/New_York: days in reports and exports are its days.",
        )}
        {field(
          "currency",
          "Currency",
          <select
            id="org-currency"
            disabled={!writable}
            value={draft.currency}
            onChange={(e) => set("currency", e.currentTarget.value)}
          >
            {CURRENCIES.map((c) => (
              <option key={c} value={c}>
                {c}
              </option>
            ))}
          </select>,
        )}
        {field(
          "language",
          "Donors' language",
          <select
            id="org-language"
            disabled={!writable}
            value={draft.language}
            onChange={(e) => set("language", e.currentTarget.value)}
          >
            {LANGUAGES.map((l) => (
              <option key={l} value={l}>
                {LANGUAGE_NAMES[l]}
              </option>
            ))}
          </select>,
        )}
        <label class="choice">
          <input
            type="checkbox"
            disabled={!writable}
            checked={draft.requireTwoFactor}
            onChange={(e) => set("requireTwoFactor", e.currentTarget.checked)}
          />{" "}
          Owners and Finance must use two-step sign-in
        </label>
        <h2>Receipts</h2>
        {field("receiptReplyTo", "Reply-to address", input("receiptReplyTo", "email"))}
        {field(
          "receiptSubject",
          "Subject",
          input("receiptSubject"),
          "Forms with their own receipt words keep theirs.",
        )}
        {field(
          "receiptMessage",
          "Message",
          <textarea
            id="org-receiptMessage"
            rows={4}
            disabled={!writable}
            value={text("receiptMessage")}
            onInput={(e) => set("receiptMessage", e.currentTarget.value)}
          />,
        )}
        <ErrorNote message={error} />
        {elsewhere.length > 0 && (
          <ul class="error">
            {elsewhere.map((d) => (
              <li key={d}>{d}</li>
            ))}
          </ul>
        )}
        <Notice message={notice} />
        {writable && <button type="submit">Save the settings</button>}
      </form>
      {writable && <TestReceipt />}
      <PaymentSettings writable={writable} />
    </>
  );
}

function TestReceipt() {
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  return (
    <section aria-labelledby="test-title">
      <h2 id="test-title">Test receipt</h2>
      <p>Sends a sample receipt with these settings to {me.value?.email}.</p>
      <button
        type="button"
        class="secondary"
        onClick={async () => {
          setError(null);
          try {
            const answer = await call<{ to: string }>("POST", "/v1/organization/test-receipt", {});
            setNotice(`A test receipt is on its way to ${answer.to}.`);
          } catch (err) {
            setError(messageOf(err));
          }
        }}
      >
        Send me a test receipt
      </button>
      <Notice message={notice} />
      <ErrorNote message={error} />
    </section>
  );
}

function PaymentSettings(props: { writable: boolean }) {
  const [payments, setPayments] = useState<Payments | null>(null);
  const [secretKey, setSecretKey] = useState("");
  const [publishableKey, setPublishableKey] = useState("");
  const [domain, setDomain] = useState("");
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  useEffect(() => {
    get<Payments>("/v1/organization/payments")
      .then(setPayments)
      .catch((err: unknown) => setError(messageOf(err)));
  }, []);
  const act = async (work: () => Promise<Payments>, done: string) => {
    setError(null);
    setNotice(null);
    try {
      const answer = await work();
      setPayments(answer);
      setNotice([done, ...(answer.warnings ?? [])].join(" "));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const stripe = payments?.stripe;
  return (
    <section aria-labelledby="payments-title">
      <h2 id="payments-title">Payments</h2>
      {payments && (
        <p>
          {stripe
            ? `Stripe (${stripe.mode} mode), account ${stripe.accountName ?? stripe.accountId ?? "—"}, key ${stripe.secretKeyHint}, connected ${when(stripe.connectedAt)}.`
            : "The sandbox: test cards only, no real money."}
        </p>
      )}
      <Notice message={notice} />
      <ErrorNote message={error} />
      {stripe && (
        <>
          <h3>Wallet domains (Apple Pay, Google Pay)</h3>
          <ul class="plain">
            {stripe.walletDomains.map((d) => (
              <li key={d}>{d}</li>
            ))}
          </ul>
          {props.writable && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                void act(
                  () => call<Payments>("POST", "/v1/organization/payments/stripe/domains", { domain }),
                  `${domain} is added.`,
                );
              }}
            >
              <label for="stripe-domain">Add a domain</label>
              <input
                id="stripe-domain"
                required
                value={domain}
                onInput={(e) => setDomain(e.currentTarget.value)}
              />
              <button type="submit" class="secondary">
                Add
              </button>
            </form>
          )}
        </>
      )}
      {props.writable && (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void act(async () => {
              const answer = await call<Payments>("PUT", "/v1/organization/payments/stripe", {
                secretKey,
                publishableKey,
              });
              setSecretKey("");
              return answer;
            }, "Stripe is connected.");
          }}
        >
          <h3>{stripe ? "Change the Stripe keys" : "Connect Stripe"}</h3>
          <label for="stripe-secret">Secret key (sk_…)</label>
          <input
            id="stripe-secret"
            type="password"
            autoComplete="off"
            required
            value={secretKey}
            onInput={(e) => setSecretKey(e.currentTarget.value)}
          />
          <label for="stripe-publishable">Publishable key (pk_…)</label>
          <input
            id="stripe-publishable"
            autoComplete="off"
            required
            value={publishableKey}
            onInput={(e) => setPublishableKey(e.currentTarget.value)}
          />
          <button type="submit">{stripe ? "Check and save the keys" : "Check and connect"}</button>
        </form>
      )}
      {props.writable && stripe && (
        <div>
          {confirming ? (
            <ConfirmInline
              block
              question="Disconnect Stripe?"
              detail="Forms then take sandbox payments only."
              yes="Yes, disconnect"
              keep="Keep it"
              onYes={() =>
                act(async () => {
                  const answer = await call<Payments>("DELETE", "/v1/organization/payments/stripe");
                  setConfirming(false);
                  return answer;
                }, "Stripe is disconnected.")
              }
              onKeep={() => setConfirming(false)}
              trigger="disconnect-stripe"
            />
          ) : (
            <button type="button" class="danger" id="disconnect-stripe" onClick={() => setConfirming(true)}>
              Disconnect Stripe…
            </button>
          )}
        </div>
      )}
    </section>
  );
}
