import { useEffect, useRef, useState } from "preact/hooks";
import { decimalsOf } from "../../../shared/currency.js";
import { call, downloadCsv, get, isFinalAnswer, newIdempotencyKey, query } from "../api.js";
import { money, orgNow, when, words } from "../format.js";
import { formNames, loadFormNames } from "../forms.js";
import { ListFooter, useDraft, usePagedList } from "../list.js";
import type { PageProps } from "../page.js";
import { navigate, to } from "../router.js";
import { can } from "../session.js";
import { ConfirmInline, ErrorNote, Field, messageOf, Notice, PageTitle } from "../ui.js";

/**
 * Payments: one search box (name, e-mail, payment id, last 4 digits) and filters, kept in the address so a
 * search can be shared and reloaded; a payment's details; its receipt sent again; a refund. The export is the
 * same list, every row its filters match, as CSV.
 */

export interface Payment {
  paymentID: string;
  email: string;
  firstName: string;
  lastName: string;
  amount: number;
  currency: string;
  status: string;
  fund: string;
  form: string;
  formID: string;
  frequency: string;
  date: string;
  paymentMethod: string;
  coverFees: boolean;
  anonymous: boolean;
  contactId: string | null;
  subscriptionId: string | null;
  feeAmount: number;
  refundedAmount: number;
  card: { brand: string; last4: string | null } | null;
  bankLast4: string | null;
  tickets: { name: string; quantity: number; amount: number }[];
  promoCode: string | null;
  discount: number;
  customInputs: { id: string; title: string; value: string | string[] }[];
  tribute: { kind: string; honoreeName: string; notifyEmail?: string; message?: string } | null;
  utm: Record<string, string>;
  failureMessage: string | null;
  dispute?: { status: string; reason?: string } | null;
}

const FILTERS = [
  "search",
  "from",
  "to",
  "formID",
  "status",
  "paymentMethod",
  "frequency",
  "minAmount",
  "maxAmount",
];
const STATUSES = ["COMPLETED", "PENDING", "FAILED", "REFUNDED"];
const METHODS = ["card", "bank", "none"];
const FREQUENCIES = ["ONE_TIME", "DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"];

const filtersOf = (params: URLSearchParams): Record<string, string> =>
  Object.fromEntries(FILTERS.map((name) => [name, params.get(name) ?? ""]).filter(([, v]) => v));

export default function Payments(props: PageProps) {
  if (props.rest) return <PaymentDetail id={decodeURIComponent(props.rest)} />;
  return <PaymentList query={props.query} />;
}

function PaymentList(props: { query: URLSearchParams }) {
  const filters = filtersOf(props.query);
  const [draft, setDraft] = useDraft<Record<string, string>>(filters);
  const [exportError, setExportError] = useState<string | null>(null);
  const list = usePagedList<Payment>("/v1/payments", "payments", filters);
  useEffect(() => {
    if (can("forms:read")) void loadFormNames();
  }, []);
  const set = (name: string) => (event: Event) =>
    setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value });

  const apply = (event: Event) => {
    event.preventDefault();
    navigate(to("payments", draft));
  };
  const exportCsv = async () => {
    setExportError(null);
    try {
      await downloadCsv(`/v1/payments${query(filters)}`, "payments", orgNow().slice(0, 10));
    } catch (err) {
      setExportError(messageOf(err));
    }
  };

  return (
    <>
      <PageTitle title="Payments">Payments</PageTitle>
      <form class="filters" aria-label="Filters" onSubmit={apply}>
        <Field
          label="Search"
          hint="A donor's name or e-mail, a payment id, or the last 4 digits of a card or account"
        >
          {(id, hint) => (
            <input
              id={id}
              type="search"
              aria-describedby={hint}
              value={draft.search ?? ""}
              onInput={set("search")}
            />
          )}
        </Field>
        <Field label="From">
          {(id) => <input id={id} type="date" value={draft.from ?? ""} onInput={set("from")} />}
        </Field>
        <Field label="To">
          {(id) => <input id={id} type="date" value={draft.to ?? ""} onInput={set("to")} />}
        </Field>
        <Field label="Status">
          {(id) => (
            <select id={id} value={draft.status ?? ""} onChange={set("status")}>
              <option value="">Any</option>
              {STATUSES.map((s) => (
                <option key={s} value={s}>
                  {words(s)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Method">
          {(id) => (
            <select id={id} value={draft.paymentMethod ?? ""} onChange={set("paymentMethod")}>
              <option value="">Any</option>
              {METHODS.map((m) => (
                <option key={m} value={m}>
                  {m === "none" ? "Nothing to pay" : words(m)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Frequency">
          {(id) => (
            <select id={id} value={draft.frequency ?? ""} onChange={set("frequency")}>
              <option value="">Any</option>
              {FREQUENCIES.map((f) => (
                <option key={f} value={f}>
                  {words(f)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Form">
          {(id) =>
            (formNames.value ?? []).length > 0 ? (
              <select id={id} value={draft.formID ?? ""} onChange={set("formID")}>
                <option value="">Any</option>
                {(formNames.value ?? []).map((f) => (
                  <option key={f.formID} value={f.formID}>
                    {f.title}
                  </option>
                ))}
              </select>
            ) : (
              <input id={id} placeholder="A form's id" value={draft.formID ?? ""} onInput={set("formID")} />
            )
          }
        </Field>
        <Field label="Amount from">
          {(id) => (
            <input
              id={id}
              type="number"
              min="0"
              step="0.01"
              value={draft.minAmount ?? ""}
              onInput={set("minAmount")}
            />
          )}
        </Field>
        <Field label="Amount to">
          {(id) => (
            <input
              id={id}
              type="number"
              min="0"
              step="0.01"
              value={draft.maxAmount ?? ""}
              onInput={set("maxAmount")}
            />
          )}
        </Field>
        <div class="actions">
          <button type="submit">Search</button>
          <button
            type="button"
            class="secondary"
            onClick={() => {
              setDraft({});
              navigate(to("payments"));
            }}
          >
            Clear
          </button>
          <button type="button" class="secondary" onClick={exportCsv}>
            Export CSV
          </button>
        </div>
      </form>
      <ErrorNote message={exportError} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Payments, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Date</th>
              <th scope="col">Donor</th>
              <th scope="col">Amount</th>
              <th scope="col">Status</th>
              <th scope="col">Form</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((p) => (
              <tr key={p.paymentID}>
                <td>{when(p.date)}</td>
                <td>
                  <a href={to(`payments/${p.paymentID}`)}>
                    {`${p.firstName} ${p.lastName}`.trim() || p.email}
                  </a>
                  <br />
                  <small>{p.email}</small>
                </td>
                <td>{money(p.amount, p.currency)}</td>
                <td>
                  {words(p.status)}
                  {/* A payment refunded in part stays Completed: the list says how much went back. */}
                  {p.status === "COMPLETED" && p.refundedAmount > 0 && (
                    <>
                      <br />
                      <small>{money(p.refundedAmount, p.currency)} refunded</small>
                    </>
                  )}
                </td>
                <td>{p.form}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ListFooter {...list} count={list.items.length} noun="payments" />
    </>
  );
}

function PaymentDetail(props: { id: string }) {
  const [payment, setPayment] = useState<Payment | null>(null);
  const [error, setError] = useState<string | null>(null);
  // What the last refund did: shown here, not in the refund's form, which is gone once nothing is left.
  const [refunded, setRefunded] = useState<{ text: string } | null>(null);
  const refundedNote = useRef<HTMLParagraphElement>(null);
  useEffect(() => refundedNote.current?.focus(), [refunded]);
  useEffect(() => {
    get<Payment>(`/v1/payments/${encodeURIComponent(props.id)}`)
      .then(setPayment)
      .catch((err: unknown) => setError(messageOf(err)));
  }, [props.id]);

  if (error)
    return (
      <>
        <PageTitle title="Payment">Payment</PageTitle>
        <ErrorNote message={error} />
        <a href={to("payments")}>Back to payments</a>
      </>
    );
  if (!payment) return <p aria-busy="true">Loading…</p>;
  const p = payment;
  const left = Math.round((p.amount - p.refundedAmount) * 100) / 100;
  const rows: [string, string][] = [
    ["Payment id", p.paymentID],
    ["Date", when(p.date)],
    ["Donor", `${p.firstName} ${p.lastName}`.trim()],
    ["E-mail", p.email],
    ["Amount", money(p.amount, p.currency)],
    ["Status", words(p.status)],
    ["Refunded", money(p.refundedAmount, p.currency)],
    ["Covered fee", p.coverFees ? money(p.feeAmount, p.currency) : "No"],
    ["Frequency", words(p.frequency)],
    ["Form", p.form],
    ["Fund", p.fund || "—"],
    [
      "Method",
      p.card
        ? `${words(p.card.brand)} ending ${p.card.last4 ?? "—"}`
        : p.bankLast4
          ? `Bank account ending ${p.bankLast4}`
          : words(p.paymentMethod),
    ],
    ["Anonymous", p.anonymous ? "Yes" : "No"],
    ["Promo code", p.promoCode ? `${p.promoCode} (−${money(p.discount, p.currency)})` : "—"],
  ];
  if (p.failureMessage) rows.push(["Why it failed", p.failureMessage]);
  if (p.dispute)
    rows.push(["Dispute", `${words(p.dispute.status)}${p.dispute.reason ? `: ${p.dispute.reason}` : ""}`]);
  if (p.tribute)
    rows.push([
      p.tribute.kind === "MEMORY" ? "In memory of" : "In honor of",
      `${p.tribute.honoreeName}${p.tribute.message ? ` — ${p.tribute.message}` : ""}`,
    ]);
  for (const input of p.customInputs)
    rows.push([input.title, Array.isArray(input.value) ? input.value.join(", ") : input.value]);
  // `amount` is the line's total: "2 tickets, $150.00", not "2 × $150.00" (which reads as $300).
  for (const ticket of p.tickets)
    rows.push([
      `Ticket: ${ticket.name}`,
      `${ticket.quantity} ${ticket.quantity === 1 ? "ticket" : "tickets"}, ${money(ticket.amount, p.currency)}`,
    ]);
  for (const [key, value] of Object.entries(p.utm ?? {})) rows.push([`UTM ${key}`, value]);

  return (
    <>
      <PageTitle title="Payment">
        {money(p.amount, p.currency)} from {`${p.firstName} ${p.lastName}`.trim() || p.email}
      </PageTitle>
      <p>
        <a href={to("payments")}>Back to payments</a>
        {p.contactId && (
          <>
            {" · "}
            <a href={to(`contacts/${p.contactId}`)}>The donor's contact</a>
          </>
        )}
        {p.subscriptionId && (
          <>
            {" · "}
            <a href={to(`recurring/${p.subscriptionId}`)}>The recurring gift</a>
          </>
        )}
      </p>
      <dl class="details">
        {rows.map(([label, value]) => (
          <div key={label}>
            <dt>{label}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {can("donations:write") && hasReceipt(p) && <ResendReceipt payment={p} />}
      {refunded && (
        <p class="notice" role="status" tabIndex={-1} ref={refundedNote}>
          {refunded.text}
        </p>
      )}
      {can("donations:write") && p.status === "COMPLETED" && left > 0 && (
        <Refund
          payment={p}
          left={left}
          onDone={(payment, text) => {
            setPayment(payment);
            setRefunded({ text });
          }}
        />
      )}
      {can("donations:write") && p.status === "COMPLETED" && p.amount === 0 && (
        <CancelFreeOrder
          payment={p}
          onDone={(payment, text) => {
            setPayment(payment);
            setRefunded({ text });
          }}
        />
      )}
    </>
  );
}

/** A free registration: nothing to refund, so the refund cancels it (tickets void, places given back). */
function CancelFreeOrder(props: { payment: Payment; onDone: (payment: Payment, notice: string) => void }) {
  const p = props.payment;
  const [confirming, setConfirming] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // One key until the cancel has its final answer, so asking again after a lost answer is the same request.
  const openKey = useRef<string | null>(null);
  const cancel = async () => {
    setBusy(true);
    setError(null);
    openKey.current ??= newIdempotencyKey();
    try {
      const answer = await call<{ message: string; payment: Payment }>(
        "POST",
        `/v1/payments/${encodeURIComponent(p.paymentID)}/refund`,
        {},
        { idempotencyKey: openKey.current },
      );
      openKey.current = null;
      setConfirming(false);
      props.onDone(answer.payment, `${answer.message}.`);
    } catch (err) {
      if (isFinalAnswer(err)) openKey.current = null;
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="cancel-free-title">
      <h2 id="cancel-free-title">Cancel registration</h2>
      <p>Nothing was charged for this registration: cancelling it voids its tickets and frees its places.</p>
      <ErrorNote message={error} />
      {!confirming && (
        <button type="button" id="cancel-free-ask" onClick={() => setConfirming(true)}>
          Cancel registration…
        </button>
      )}
      {confirming && (
        <ConfirmInline
          block
          question={`Cancel the registration of ${p.email}?`}
          detail="Its tickets will admit nobody. This cannot be undone."
          yes="Yes, cancel it"
          keep="Keep it"
          onYes={cancel}
          onKeep={() => setConfirming(false)}
          busy={busy}
          trigger="cancel-free-ask"
        />
      )}
    </section>
  );
}

/**
 * A payment with a receipt to send again: completed, or a bank payment still settling (the server also
 * refuses a bank account still to be verified, which the list cannot tell apart; its refusal is shown).
 * A failed or fully refunded one, or a card charge waiting for the donor, has none (409).
 */
const hasReceipt = (p: Payment): boolean =>
  p.status === "COMPLETED" || (p.status === "PENDING" && p.paymentMethod === "bank");

function ResendReceipt(props: { payment: Payment }) {
  const [notice, setNotice] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const send = async () => {
    setError(null);
    try {
      await call("POST", `/v1/payments/${encodeURIComponent(props.payment.paymentID)}/receipt`);
      setNotice(`The receipt is on its way to ${props.payment.email}.`);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section aria-labelledby="receipt-title">
      <h2 id="receipt-title">Receipt</h2>
      <button type="button" class="secondary" onClick={send}>
        Send the receipt again
      </button>
      <Notice message={notice} />
      <ErrorNote message={error} />
    </section>
  );
}

function Refund(props: {
  payment: Payment;
  left: number;
  /** The payment as refunded, and what to say of it. */
  onDone: (payment: Payment, notice: string) => void;
}) {
  const p = props.payment;
  const [amount, setAmount] = useState(String(props.left));
  const [reason, setReason] = useState("");
  const [confirming, setConfirming] = useState(false);
  // The Idempotency-Keys of the refunds asked for whose outcome is still open (no answer, or one the server
  // did not keep), by request: asking again for the same refund sends the same key, so it is never made
  // twice. Another amount or reason is another request, with a key of its own; once a refund has its final
  // answer (made, or refused), asking for it again is a new request too.
  const openKeys = useRef(new Map<string, string>());
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // A currency without decimals (JPY) is refunded in whole units.
  const unit = decimalsOf(p.currency) === 0 ? "1" : "0.01";

  const ask = (event: Event) => {
    event.preventDefault();
    const value = Number(amount);
    if (!Number.isFinite(value) || value <= 0 || value > props.left) {
      setError(`Enter an amount above 0 and at most ${money(props.left, p.currency)}.`);
      return;
    }
    setError(null);
    setConfirming(true);
  };
  const refund = async () => {
    setBusy(true);
    setError(null);
    const body = { amount: Number(amount), ...(reason.trim() ? { reason: reason.trim() } : {}) };
    const request = JSON.stringify(body);
    const key = openKeys.current.get(request) ?? newIdempotencyKey();
    openKeys.current.set(request, key);
    try {
      const answer = await call<{ message: string; payment: Payment }>(
        "POST",
        `/v1/payments/${encodeURIComponent(p.paymentID)}/refund`,
        body,
        { idempotencyKey: key },
      );
      openKeys.current.delete(request);
      setConfirming(false);
      props.onDone(answer.payment, `${answer.message}: ${money(body.amount, p.currency)}.`);
    } catch (err) {
      if (isFinalAnswer(err)) openKeys.current.delete(request);
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="refund-title">
      <h2 id="refund-title">Refund</h2>
      <form onSubmit={ask}>
        <Field
          label={`Amount (${p.currency.toUpperCase()})`}
          hint={`At most ${money(props.left, p.currency)}.`}
        >
          {(id, hint) => (
            <input
              id={id}
              type="number"
              min={unit}
              step={unit}
              max={props.left}
              aria-describedby={hint}
              required
              value={amount}
              onInput={(e) => {
                setAmount(e.currentTarget.value);
                setConfirming(false);
              }}
            />
          )}
        </Field>
        <Field label="Reason (optional)">
          {(id) => (
            <input id={id} maxLength={500} value={reason} onInput={(e) => setReason(e.currentTarget.value)} />
          )}
        </Field>
        <ErrorNote message={error} />
        {!confirming && (
          <button type="submit" id="refund-ask">
            Refund…
          </button>
        )}
      </form>
      {confirming && (
        <ConfirmInline
          block
          question={`Refund ${money(Number(amount), p.currency)} to ${p.email}?`}
          detail="This cannot be undone."
          yes={`Yes, refund ${money(Number(amount), p.currency)}`}
          keep="Cancel"
          onYes={refund}
          onKeep={() => setConfirming(false)}
          busy={busy}
          trigger="refund-ask"
        />
      )}
    </section>
  );
}
