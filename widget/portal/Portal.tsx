import { useEffect, useState } from "preact/hooks";
import { cardBrandName } from "../../shared/cardBrands.js";
import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import { type Gifts, PortalError, portalApi, type Subscription } from "./api.js";
import { portalLanguage, t } from "./i18n.js";

/**
 * The donor portal: sign in with a mailed link, then see one's gifts and recurring gifts, change, skip or
 * cancel a recurring gift, replace its payment method, and download receipts and year-end statements.
 */

type Phase =
  | { kind: "loading" }
  | { kind: "signin"; notice?: string }
  | { kind: "sent"; message: string }
  /** A mailed link opened: whose it is, shown before it is used (it may be someone else's, sent on). */
  | { kind: "confirm"; token: string; email: string }
  | { kind: "ready"; gifts: Gifts };

type Api = ReturnType<typeof portalApi>;

const frequencyWord = (f: string) => t(`checkout.frequency.${f}` as MessageKey);

function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat(portalLanguage(), { style: "currency", currency }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
}

/** The day an instant falls on in the organization's time zone (as its statements count it), or "". */
function day(iso: string | null, timeZone: string): string {
  if (!iso) return "";
  try {
    return new Date(iso).toLocaleDateString(portalLanguage(), { dateStyle: "medium", timeZone });
  } catch {
    // A zone this browser's time zone data does not know yet: the date as kept (UTC).
    return iso.slice(0, 10);
  }
}

export function Portal({ organizationId }: { organizationId: string }) {
  const [api] = useState(() => portalApi(organizationId));
  const [phase, setPhase] = useState<Phase>({ kind: "loading" });

  async function load(notice?: string) {
    try {
      setPhase({ kind: "ready", gifts: await api.gifts() });
    } catch (err) {
      if (err instanceof PortalError && err.status === 401) setPhase({ kind: "signin", notice });
      else setPhase({ kind: "signin", notice: (err as Error).message });
    }
  }

  useEffect(() => {
    const url = new URL(location.href);
    const token = url.searchParams.get("token");
    if (!token) {
      void load();
      return;
    }
    // The token works once: take it out of the address bar and history before anything else.
    url.searchParams.delete("token");
    history.replaceState(null, "", url.pathname + url.search);
    api
      .previewLink(token)
      .then(({ email }) => setPhase({ kind: "confirm", token, email }))
      .catch((err: Error) => setPhase({ kind: "signin", notice: err.message }));
  }, []);

  if (phase.kind === "loading") return <p aria-busy="true">{t("portal.loading")}</p>;
  if (phase.kind === "confirm")
    return (
      <ConfirmLink
        email={phase.email}
        onContinue={() =>
          api
            .signIn(phase.token)
            .then(() => load())
            .catch((err: Error) => setPhase({ kind: "signin", notice: err.message }))
        }
        onDecline={() => setPhase({ kind: "signin" })}
      />
    );
  if (phase.kind === "signin" || phase.kind === "sent")
    return <SignIn api={api} phase={phase} onSent={(message) => setPhase({ kind: "sent", message })} />;
  return (
    <Dashboard
      api={api}
      gifts={phase.gifts}
      reload={() => load()}
      signOut={async () => {
        await api.signOut().catch(() => undefined);
        setPhase({ kind: "signin", notice: t("portal.signedOut") });
      }}
    />
  );
}

/** Asks before a mailed link signs in: it names the address, and offers one's own link instead. */
function ConfirmLink(props: { email: string; onContinue: () => Promise<void>; onDecline: () => void }) {
  const [busy, setBusy] = useState(false);
  return (
    <section aria-labelledby="confirm-heading">
      <h2 id="confirm-heading">{t("portal.signIn")}</h2>
      <p>{t("portal.confirm.intro", { email: props.email })}</p>
      <button
        type="button"
        disabled={busy}
        onClick={() => {
          setBusy(true);
          void props.onContinue().finally(() => setBusy(false));
        }}
      >
        {t("portal.confirm.continue", { email: props.email })}
      </button>
      <button type="button" class="link" onClick={props.onDecline}>
        {t("portal.confirm.notYou")}
      </button>
    </section>
  );
}

function SignIn(props: {
  api: Api;
  phase: Extract<Phase, { kind: "signin" | "sent" }>;
  onSent: (m: string) => void;
}) {
  const [email, setEmail] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  if (props.phase.kind === "sent")
    return (
      <p role="status" class="notice">
        {props.phase.message}
      </p>
    );
  return (
    <form
      class="signin"
      onSubmit={async (e) => {
        e.preventDefault();
        setBusy(true);
        setError(null);
        try {
          await props.api.requestLink(email, portalLanguage());
          props.onSent(t("portal.linkSent"));
        } catch (err) {
          setError((err as Error).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2>{t("portal.signIn")}</h2>
      {props.phase.notice && <p role="status">{props.phase.notice}</p>}
      <p>{t("portal.signIn.intro")}</p>
      <label for="portal-email">{t("portal.email")}</label>
      <input
        id="portal-email"
        type="email"
        autoComplete="email"
        required
        value={email}
        onInput={(e) => setEmail(e.currentTarget.value)}
      />
      {error && <p role="alert">{error}</p>}
      <button type="submit" disabled={busy}>
        {t("portal.sendLink")}
      </button>
    </form>
  );
}

function Dashboard(props: {
  api: Api;
  gifts: Gifts;
  reload: () => Promise<void>;
  signOut: () => Promise<void>;
}) {
  const { payments, subscriptions, statementYears: years, timeZone, currentYear } = props.gifts;
  const email = payments[0]?.email ?? subscriptions[0]?.email ?? "";
  const [year, setYear] = useState(years[0] ?? currentYear);
  return (
    <div>
      <p class="who">
        {t("portal.signedInAs", { email })}{" "}
        <button type="button" class="link" onClick={props.signOut}>
          {t("portal.signOut")}
        </button>
      </p>
      <section aria-labelledby="recurring-heading">
        <h2 id="recurring-heading">{t("portal.recurring")}</h2>
        {subscriptions.length === 0 ? (
          <p>{t("portal.noRecurring")}</p>
        ) : (
          subscriptions.map((s) => (
            <RecurringGift key={s.id} api={props.api} sub={s} timeZone={timeZone} reload={props.reload} />
          ))
        )}
      </section>
      <section aria-labelledby="gifts-heading">
        <h2 id="gifts-heading">{t("portal.gifts")}</h2>
        {payments.length === 0 ? (
          <p>{t("portal.noGifts")}</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">{t("portal.col.date")}</th>
                <th scope="col">{t("portal.col.gift")}</th>
                <th scope="col">{t("portal.col.amount")}</th>
                <th scope="col">{t("portal.col.status")}</th>
                <th scope="col">{t("portal.col.receipt")}</th>
              </tr>
            </thead>
            <tbody>
              {payments.map((p) => (
                <tr key={p.paymentID}>
                  <td>{day(p.date, timeZone)}</td>
                  <td>
                    {frequencyWord(p.frequency)} · {p.form}
                  </td>
                  <td>{money(p.amount, p.currency)}</td>
                  <td>{t(`portal.status.${p.status}` as MessageKey)}</td>
                  <td>
                    {p.status === "COMPLETED" || p.status === "REFUNDED" ? (
                      <a href={props.api.receiptUrl(p.paymentID, portalLanguage())} download>
                        {t("portal.receipt")} <span class="visually-hidden">{day(p.date, timeZone)}</span>
                      </a>
                    ) : null}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <section aria-labelledby="statement-heading">
        <h2 id="statement-heading">{t("portal.statement")}</h2>
        <label for="statement-year">{t("portal.year")}</label>{" "}
        <select id="statement-year" value={year} onChange={(e) => setYear(Number(e.currentTarget.value))}>
          {(years.length ? years : [year]).map((y) => (
            <option key={y} value={y}>
              {y}
            </option>
          ))}
        </select>{" "}
        <a href={props.api.statementUrl(year, portalLanguage())} download>
          {t("portal.downloadStatement", { year })}
        </a>
      </section>
    </div>
  );
}

function RecurringGift(props: {
  api: Api;
  sub: Subscription;
  timeZone: string;
  reload: () => Promise<void>;
}) {
  const { sub } = props;
  const [amount, setAmount] = useState(String(sub.amount));
  const [frequency, setFrequency] = useState(sub.frequency);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const active = sub.status === "ACTIVE";
  const amountAndFrequency = {
    amount: money(sub.amount, sub.currency),
    frequency: frequencyWord(sub.frequency).toLocaleLowerCase(portalLanguage()),
  };
  const label = t("portal.recurringGift", amountAndFrequency);
  // What the gift's form takes (the server says), and the gift's own frequency whatever it is.
  const choices = sub.frequencies.includes(sub.frequency)
    ? sub.frequencies
    : [sub.frequency, ...sub.frequencies];

  async function change(body: Record<string, unknown>, done: string) {
    setMessage(null);
    try {
      await props.api.change(sub.id, body);
      await props.reload();
      setMessage({ text: done, error: false });
    } catch (err) {
      setMessage({ text: (err as Error).message, error: true });
    }
  }

  return (
    <article class="recurring" aria-label={label}>
      <h3>
        {label}
        {sub.fund ? ` · ${sub.fund}` : ""}
      </h3>
      <p>
        {active
          ? [
              t("portal.nextGift", { date: day(sub.nextBillingDate, props.timeZone) }),
              sub.paymentMethod.last4
                ? t("portal.cardEnding", {
                    brand:
                      sub.paymentMethod.type === "bank"
                        ? t("checkout.method.bank")
                        : (cardBrandName(sub.paymentMethod.brand) ?? t("checkout.method.card")),
                    last4: sub.paymentMethod.last4,
                  })
                : "",
            ]
              .filter(Boolean)
              .join(" · ")
          : t("portal.cancelled")}
      </p>
      {active && (
        <div class="actions">
          <form
            onSubmit={(e) => {
              e.preventDefault();
              // The gift as it is: said so, and nothing sent (no change announced that was not made).
              if (Number(amount) === sub.amount) setMessage({ text: t("portal.unchanged"), error: false });
              else void change({ amount: Number(amount) }, t("portal.done.amount"));
            }}
          >
            <label for={`amount-${sub.id}`}>{t("portal.amount")}</label>
            <input
              id={`amount-${sub.id}`}
              type="number"
              min="1"
              step="0.01"
              inputMode="decimal"
              value={amount}
              onInput={(e) => setAmount(e.currentTarget.value)}
            />
            <button type="submit">{t("portal.changeAmount")}</button>
          </form>
          {choices.length > 1 && (
            <form
              onSubmit={(e) => {
                e.preventDefault();
                if (frequency === sub.frequency) setMessage({ text: t("portal.unchanged"), error: false });
                else void change({ frequency }, t("portal.done.frequency"));
              }}
            >
              <label for={`frequency-${sub.id}`}>{t("portal.frequency")}</label>
              <select
                id={`frequency-${sub.id}`}
                value={frequency}
                onChange={(e) => setFrequency(e.currentTarget.value)}
              >
                {choices.map((value) => (
                  <option key={value} value={value}>
                    {frequencyWord(value)}
                  </option>
                ))}
              </select>
              <button type="submit">{t("portal.changeFrequency")}</button>
            </form>
          )}
          <button type="button" onClick={() => change({ skipNext: true }, t("portal.done.skip"))}>
            {t("portal.skip")}
          </button>
          <button
            type="button"
            onClick={async () => {
              try {
                // The update page speaks the portal's language.
                const url = new URL((await props.api.updateLink(sub.id)).url);
                url.searchParams.set("lang", portalLanguage());
                location.assign(url.toString());
              } catch (err) {
                setMessage({ text: (err as Error).message, error: true });
              }
            }}
          >
            {t("portal.updateMethod")}
          </button>
          <button
            type="button"
            class="danger"
            onClick={() => {
              if (confirm(t("portal.confirmCancel", amountAndFrequency)))
                void change({ status: "CANCELLED" }, t("portal.done.cancel"));
            }}
          >
            {t("portal.cancel")}
          </button>
        </div>
      )}
      {message && (
        <p role={message.error ? "alert" : "status"} class={message.error ? "error" : "notice"}>
          {message.text}
        </p>
      )}
    </article>
  );
}
