import { useEffect, useState } from "preact/hooks";
import { decimalsOf } from "../../../shared/currency.js";
import { call, downloadCsv, get, query } from "../api.js";
import { money, orgNow, when, words } from "../format.js";
import { ListFooter, useDraft, usePagedList } from "../list.js";
import type { PageProps } from "../page.js";
import { navigate, to } from "../router.js";
import { can } from "../session.js";
import { ConfirmInline, ErrorNote, Field, messageOf, Notice, PageTitle } from "../ui.js";

/**
 * Recurring gifts: status and next charge; a gift's page changes its amount, cancels it, or makes the link
 * the donor follows to give a new card or account. Each change is the API's own call, so it fires the same
 * webhooks and is written to the audit log.
 */

export interface Subscription {
  id: string;
  status: "ACTIVE" | "CANCELLED";
  amount: number;
  currency: string;
  frequency: string;
  nextBillingDate: string | null;
  lastBillingDate: string | null;
  endBillingDate: string | null;
  coveredFee: boolean;
  formID: string;
  contactId: string;
  email: string;
  fund: string;
  paymentMethod: { type: string; brand: string | null; last4: string | null };
  createdAt: string;
  cancelledAt: string | null;
}

const FILTERS = ["search", "status", "frequency"];

export default function Recurring(props: PageProps) {
  if (props.rest) return <RecurringDetail id={decodeURIComponent(props.rest)} />;
  const filters = Object.fromEntries(
    FILTERS.map((name) => [name, props.query.get(name) ?? ""]).filter(([, v]) => v),
  );
  return <RecurringList filters={filters} />;
}

function RecurringList(props: { filters: Record<string, string> }) {
  const [draft, setDraft] = useDraft(props.filters);
  const [error, setError] = useState<string | null>(null);
  const list = usePagedList<Subscription>("/v1/subscriptions", "subscriptions", props.filters);
  const set = (name: string) => (event: Event) =>
    setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value });
  const exportCsv = () =>
    downloadCsv(`/v1/subscriptions${query(props.filters)}`, "recurring-gifts", orgNow().slice(0, 10)).catch(
      (err: unknown) => setError(messageOf(err)),
    );

  return (
    <>
      <PageTitle title="Recurring gifts">Recurring gifts</PageTitle>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(to("recurring", draft));
        }}
      >
        <Field label="Search" hint="A donor's name or e-mail">
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
        <Field label="Status">
          {(id) => (
            <select id={id} value={draft.status ?? ""} onChange={set("status")}>
              <option value="">Any</option>
              <option value="ACTIVE">Active</option>
              <option value="CANCELLED">Cancelled</option>
            </select>
          )}
        </Field>
        <Field label="Frequency">
          {(id) => (
            <select id={id} value={draft.frequency ?? ""} onChange={set("frequency")}>
              <option value="">Any</option>
              {["DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"].map((f) => (
                <option key={f} value={f}>
                  {words(f)}
                </option>
              ))}
            </select>
          )}
        </Field>
        <div class="actions">
          <button type="submit">Search</button>
          <button type="button" class="secondary" onClick={exportCsv}>
            Export CSV
          </button>
        </div>
      </form>
      <ErrorNote message={error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Recurring gifts, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Donor</th>
              <th scope="col">Amount</th>
              <th scope="col">Status</th>
              <th scope="col">Next charge</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((s) => (
              <tr key={s.id}>
                <td>
                  <a href={to(`recurring/${s.id}`)}>{s.email}</a>
                </td>
                <td>
                  {money(s.amount, s.currency)} {words(s.frequency).toLowerCase()}
                </td>
                <td>{words(s.status)}</td>
                <td>{when(s.nextBillingDate)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ListFooter {...list} count={list.items.length} noun="recurring gifts" />
    </>
  );
}

function RecurringDetail(props: { id: string }) {
  const [gift, setGift] = useState<Subscription | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [amount, setAmount] = useState("");
  const [confirmCancel, setConfirmCancel] = useState(false);
  const [link, setLink] = useState<{ url: string; expiresAt: string } | null>(null);
  const path = `/v1/subscriptions/${encodeURIComponent(props.id)}`;

  useEffect(() => {
    get<Subscription>(path)
      .then((s) => {
        setGift(s);
        setAmount(String(s.amount));
      })
      .catch((err: unknown) => setError(messageOf(err)));
  }, [path]);

  const change = async (body: Record<string, unknown>, done: string) => {
    setError(null);
    setNotice(null);
    try {
      const updated = await call<Subscription>("PUT", path, body);
      setGift(updated);
      setNotice(done);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const makeLink = async () => {
    setError(null);
    try {
      setLink(
        await call<{ url: string; expiresAt: string }>("POST", `${path}/payment-method-update-link`, {}),
      );
    } catch (err) {
      setError(messageOf(err));
    }
  };

  if (!gift)
    return (
      <>
        <PageTitle title="Recurring gift">Recurring gift</PageTitle>
        <ErrorNote message={error} />
        {!error && <p aria-busy="true">Loading…</p>}
      </>
    );
  const active = gift.status === "ACTIVE";
  const writable = can("subscriptions:write") && active;
  const method = gift.paymentMethod;

  return (
    <>
      <PageTitle title="Recurring gift">
        {money(gift.amount, gift.currency)} {words(gift.frequency).toLowerCase()} from {gift.email}
      </PageTitle>
      <p>
        <a href={to("recurring")}>Back to recurring gifts</a> ·{" "}
        <a href={to("payments", { search: gift.email })}>Their payments</a> ·{" "}
        <a href={to(`contacts/${gift.contactId}`)}>Their contact</a>
      </p>
      <dl class="details">
        <div>
          <dt>Status</dt>
          <dd>{words(gift.status)}</dd>
        </div>
        <div>
          <dt>Next charge</dt>
          <dd>{when(gift.nextBillingDate)}</dd>
        </div>
        <div>
          <dt>Last charge</dt>
          <dd>{when(gift.lastBillingDate)}</dd>
        </div>
        <div>
          <dt>Began</dt>
          <dd>{when(gift.createdAt)}</dd>
        </div>
        {gift.cancelledAt && (
          <div>
            <dt>Cancelled</dt>
            <dd>{when(gift.cancelledAt)}</dd>
          </div>
        )}
        <div>
          <dt>Fund</dt>
          <dd>{gift.fund || "—"}</dd>
        </div>
        <div>
          <dt>Paid with</dt>
          <dd>
            {method.type === "card" ? `${words(method.brand ?? "card")} card` : "Bank account"} ending{" "}
            {method.last4 ?? "—"}
          </dd>
        </div>
      </dl>
      <Notice message={notice} />
      <ErrorNote message={error} />
      {writable && (
        <>
          <section aria-labelledby="amount-title">
            <h2 id="amount-title">Change the amount</h2>
            <form
              onSubmit={(event) => {
                event.preventDefault();
                void change({ amount: Number(amount) }, "The amount is changed from the next charge on.");
              }}
            >
              <Field label={`New amount (${gift.currency.toUpperCase()})`}>
                {(id) => (
                  <input
                    id={id}
                    type="number"
                    min="1"
                    step={decimalsOf(gift.currency) === 0 ? "1" : "0.01"}
                    required
                    value={amount}
                    onInput={(e) => setAmount(e.currentTarget.value)}
                  />
                )}
              </Field>
              <button type="submit">Save the amount</button>
            </form>
          </section>
          <section aria-labelledby="method-title">
            <h2 id="method-title">New card or account</h2>
            <p>Make a link for the donor to give a new card or bank account; send it to them.</p>
            <button type="button" class="secondary" onClick={makeLink}>
              Make the link
            </button>
            {link && (
              <p>
                <label>
                  The link (until {when(link.expiresAt)}):
                  <input readOnly value={link.url} onFocus={(e) => e.currentTarget.select()} />
                </label>{" "}
                <a
                  href={`mailto:${encodeURIComponent(gift.email)}?subject=${encodeURIComponent("Update your payment method")}&body=${encodeURIComponent(`You can give a new card or bank account for your recurring gift here: ${link.url}`)}`}
                >
                  E-mail it to the donor
                </a>
              </p>
            )}
          </section>
          <section aria-labelledby="cancel-title">
            <h2 id="cancel-title">Cancel</h2>
            {confirmCancel ? (
              <ConfirmInline
                block
                question="Cancel this recurring gift for good?"
                detail="No further charges will be made."
                yes="Yes, cancel it"
                keep="Keep it"
                onYes={() => change({ status: "CANCELLED" }, "The recurring gift is cancelled.")}
                onKeep={() => setConfirmCancel(false)}
                trigger="cancel-gift"
              />
            ) : (
              <button type="button" class="danger" id="cancel-gift" onClick={() => setConfirmCancel(true)}>
                Cancel the recurring gift…
              </button>
            )}
          </section>
        </>
      )}
    </>
  );
}
