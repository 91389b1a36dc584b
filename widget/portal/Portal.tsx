import { useEffect, useState } from "preact/hooks";
import { type Gifts, PortalError, portalApi, type Subscription } from "./api.js";

/**
 * The donor portal: sign in with a mailed link, then see one's gifts and recurring gifts, change, skip or
 * cancel a recurring gift, replace its payment method, and download receipts and year-end statements.
 */

type Phase =
  | { kind: "loading" }
  | { kind: "signin"; notice?: string }
  | { kind: "sent"; message: string }
  | { kind: "ready"; gifts: Gifts };

const FREQUENCIES: [string, string][] = [
  ["WEEKLY", "Weekly"],
  ["MONTHLY", "Monthly"],
  ["ANNUALLY", "Yearly"],
];
const FREQUENCY_WORDS: Record<string, string> = {
  ONE_TIME: "One-time",
  DAILY: "Daily",
  WEEKLY: "Weekly",
  MONTHLY: "Monthly",
  ANNUALLY: "Yearly",
};

function money(amount: number, currency: string): string {
  try {
    return new Intl.NumberFormat(document.documentElement.lang || "en", {
      style: "currency",
      currency,
    }).format(amount);
  } catch {
    return `${amount.toFixed(2)} ${currency}`;
  }
}

const day = (iso: string | null) =>
  iso ? new Date(iso).toLocaleDateString(document.documentElement.lang || "en", { dateStyle: "medium" }) : "";

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
      .signIn(token)
      .then(() => load())
      .catch((err: Error) => setPhase({ kind: "signin", notice: err.message }));
  }, []);

  if (phase.kind === "loading") return <p aria-busy="true">Loading…</p>;
  if (phase.kind === "signin" || phase.kind === "sent")
    return <SignIn api={api} phase={phase} onSent={(message) => setPhase({ kind: "sent", message })} />;
  return (
    <Dashboard
      api={api}
      gifts={phase.gifts}
      reload={() => load()}
      signOut={async () => {
        await api.signOut().catch(() => undefined);
        setPhase({ kind: "signin", notice: "You are signed out." });
      }}
    />
  );
}

function SignIn(props: {
  api: ReturnType<typeof portalApi>;
  phase: Extract<Phase, { kind: "signin" | "sent" }>;
  onSent: (message: string) => void;
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
          props.onSent((await props.api.requestLink(email)).message);
        } catch (err) {
          setError((err as Error).message);
        } finally {
          setBusy(false);
        }
      }}
    >
      <h2>Sign in</h2>
      {props.phase.notice && <p role="status">{props.phase.notice}</p>}
      <p>Enter the e-mail address you give with. We will send you a link that signs you in.</p>
      <label for="portal-email">Email</label>
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
        Send me a sign-in link
      </button>
    </form>
  );
}

function Dashboard(props: {
  api: ReturnType<typeof portalApi>;
  gifts: Gifts;
  reload: () => Promise<void>;
  signOut: () => Promise<void>;
}) {
  const { payments, subscriptions } = props.gifts;
  const email = payments[0]?.email ?? subscriptions[0]?.email ?? "";
  const years = [...new Set(payments.map((p) => Number(p.date.slice(0, 4))))].sort((a, b) => b - a);
  const [year, setYear] = useState(years[0] ?? new Date().getFullYear());
  return (
    <div>
      <p class="who">
        Signed in as <strong>{email}</strong>{" "}
        <button type="button" class="link" onClick={props.signOut}>
          Sign out
        </button>
      </p>
      <section aria-labelledby="recurring-heading">
        <h2 id="recurring-heading">Recurring gifts</h2>
        {subscriptions.length === 0 ? (
          <p>You have no recurring gifts.</p>
        ) : (
          subscriptions.map((s) => <RecurringGift key={s.id} api={props.api} sub={s} reload={props.reload} />)
        )}
      </section>
      <section aria-labelledby="gifts-heading">
        <h2 id="gifts-heading">Your gifts</h2>
        {payments.length === 0 ? (
          <p>No gifts yet.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th scope="col">Date</th>
                <th scope="col">Gift</th>
                <th scope="col">Amount</th>
                <th scope="col">Status</th>
                <th scope="col">Receipt</th>
              </tr>
            </thead>
            <tbody>
              {payments.map((p) => (
                <tr key={p.paymentID}>
                  <td>{day(p.date)}</td>
                  <td>
                    {FREQUENCY_WORDS[p.frequency] ?? ""} · {p.form}
                  </td>
                  <td>{money(p.amount, p.currency)}</td>
                  <td>{p.status.toLowerCase()}</td>
                  <td>
                    {p.status === "COMPLETED" || p.status === "REFUNDED" ? (
                      <a href={props.api.receiptUrl(p.paymentID)} download>
                        Receipt <span class="visually-hidden">of {day(p.date)}</span> (PDF)
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
        <h2 id="statement-heading">Year-end statement</h2>
        <label for="statement-year">Year</label>{" "}
        <select id="statement-year" value={year} onChange={(e) => setYear(Number(e.currentTarget.value))}>
          {(years.length ? years : [year]).map((y) => (
            <option key={y} value={y}>
              {y}
            </option>
          ))}
        </select>{" "}
        <a href={props.api.statementUrl(year)} download>
          Download the {year} statement (PDF)
        </a>
      </section>
    </div>
  );
}

function RecurringGift(props: {
  api: ReturnType<typeof portalApi>;
  sub: Subscription;
  reload: () => Promise<void>;
}) {
  const { sub } = props;
  const [amount, setAmount] = useState(String(sub.amount));
  const [frequency, setFrequency] = useState(sub.frequency);
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const active = sub.status === "ACTIVE";
  const label = `${money(sub.amount, sub.currency)} ${(FREQUENCY_WORDS[sub.frequency] ?? "").toLowerCase()}`;

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
    <article class="recurring" aria-label={`Recurring gift of ${label}`}>
      <h3>
        {label}
        {sub.fund ? ` · ${sub.fund}` : ""}
      </h3>
      <p>
        {active ? (
          <>
            Next gift on <strong>{day(sub.nextBillingDate)}</strong>
            {sub.paymentMethod.last4
              ? ` · ${sub.paymentMethod.brand ?? "card"} ending ${sub.paymentMethod.last4}`
              : ""}
          </>
        ) : (
          "Cancelled"
        )}
      </p>
      {active && (
        <div class="actions">
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void change({ amount: Number(amount) }, "The amount is changed.");
            }}
          >
            <label for={`amount-${sub.id}`}>Amount</label>
            <input
              id={`amount-${sub.id}`}
              type="number"
              min="1"
              step="0.01"
              inputMode="decimal"
              value={amount}
              onInput={(e) => setAmount(e.currentTarget.value)}
            />
            <button type="submit">Change amount</button>
          </form>
          <form
            onSubmit={(e) => {
              e.preventDefault();
              void change({ frequency }, "The frequency is changed.");
            }}
          >
            <label for={`frequency-${sub.id}`}>Frequency</label>
            <select
              id={`frequency-${sub.id}`}
              value={frequency}
              onChange={(e) => setFrequency(e.currentTarget.value)}
            >
              {FREQUENCIES.concat(
                FREQUENCIES.some(([f]) => f === sub.frequency)
                  ? []
                  : [[sub.frequency, FREQUENCY_WORDS[sub.frequency]]],
              ).map(([value, text]) => (
                <option key={value} value={value}>
                  {text}
                </option>
              ))}
            </select>
            <button type="submit">Change frequency</button>
          </form>
          <button type="button" onClick={() => change({ skipNext: true }, "The next gift is skipped.")}>
            Skip the next gift
          </button>
          <button
            type="button"
            onClick={async () => {
              try {
                location.assign((await props.api.updateLink(sub.id)).url);
              } catch (err) {
                setMessage({ text: (err as Error).message, error: true });
              }
            }}
          >
            Update payment method
          </button>
          <button
            type="button"
            class="danger"
            onClick={() => {
              if (confirm(`Cancel your recurring gift of ${label}? This cannot be undone.`))
                void change({ status: "CANCELLED" }, "Your recurring gift is cancelled.");
            }}
          >
            Cancel recurring gift
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
