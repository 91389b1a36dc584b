import { useEffect, useState } from "preact/hooks";
import { downloadCsv, get, query } from "../api.js";
import { money, orgNow, when, words } from "../format.js";
import { ListFooter, useDraft, usePagedList } from "../list.js";
import type { PageProps } from "../page.js";
import { navigate, to } from "../router.js";
import { me } from "../session.js";
import { ErrorNote, Field, messageOf, PageTitle } from "../ui.js";
import type { Payment } from "./Payments.js";
import type { Subscription } from "./Recurring.js";

/** Contacts: a search, and a contact's page with their gifts, recurring gifts, consent and answers. */

interface Contact {
  id: string;
  firstName: string;
  lastName: string;
  fullName: string;
  organizationName: string | null;
  emails: { value: string; isPrimary: boolean }[];
  phones: { value: string; isPrimary: boolean }[];
  addresses: {
    line1?: string;
    line2?: string;
    city: string;
    region: string;
    postal: string;
    country: string;
  }[];
  totalTransactionCount: number;
  totalTransactionValue: number;
  emailConsent: string;
  smsConsent: string;
  communicationConsent: string;
  hasActiveSubscription: boolean;
  firstDonationAt: string | null;
  lastDonationAt: string | null;
  createdAt: string;
}

const primary = (list: { value: string; isPrimary: boolean }[]): string =>
  (list.find((item) => item.isPrimary) ?? list[0])?.value ?? "";

export default function Contacts(props: PageProps) {
  if (props.rest) return <ContactPage id={decodeURIComponent(props.rest)} />;
  const search = props.query.get("search") ?? "";
  return <ContactList search={search} />;
}

function ContactList(props: { search: string }) {
  const [draft, setDraft] = useDraft(props.search);
  const [error, setError] = useState<string | null>(null);
  const filters = { search: props.search };
  const list = usePagedList<Contact>("/v1/contacts", "contacts", filters);
  const exportCsv = () =>
    downloadCsv(`/v1/contacts${query(filters)}`, "contacts", orgNow().slice(0, 10)).catch((err: unknown) =>
      setError(messageOf(err)),
    );
  return (
    <>
      <PageTitle title="Contacts">Contacts</PageTitle>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(to("contacts", { search: draft }));
        }}
      >
        <Field label="Search" hint="A name or an e-mail address">
          {(id, hint) => (
            <input
              id={id}
              type="search"
              aria-describedby={hint}
              value={draft}
              onInput={(e) => setDraft(e.currentTarget.value)}
            />
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
          <caption class="visually-hidden">Contacts, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">E-mail</th>
              <th scope="col">Given</th>
              <th scope="col">Last gift</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((c) => (
              <tr key={c.id}>
                <td>
                  <a href={to(`contacts/${c.id}`)}>{c.fullName || primary(c.emails) || c.id}</a>
                </td>
                <td>{primary(c.emails)}</td>
                <td>{c.totalTransactionCount}</td>
                <td>{when(c.lastDonationAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ListFooter {...list} count={list.items.length} noun="contacts" />
    </>
  );
}

function ContactPage(props: { id: string }) {
  const [contact, setContact] = useState<Contact | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<Contact>(`/v1/contacts/${encodeURIComponent(props.id)}`)
      .then(setContact)
      .catch((err: unknown) => setError(messageOf(err)));
  }, [props.id]);
  const payments = usePagedList<Payment>("/v1/payments", "payments", { contactId: props.id }, 10);
  const gifts = usePagedList<Subscription>("/v1/subscriptions", "subscriptions", { contactId: props.id }, 10);

  if (!contact)
    return (
      <>
        <PageTitle title="Contact">Contact</PageTitle>
        <ErrorNote message={error} />
        {!error && <p aria-busy="true">Loading…</p>}
      </>
    );
  const answers = payments.items.flatMap((p) => p.customInputs.map((input) => ({ ...input, date: p.date })));
  return (
    <>
      <PageTitle title={contact.fullName || "Contact"}>
        {contact.fullName || primary(contact.emails)}
      </PageTitle>
      <p>
        <a href={to("contacts")}>Back to contacts</a>
      </p>
      <dl class="details">
        <div>
          <dt>E-mail</dt>
          <dd>{contact.emails.map((e) => e.value).join(", ") || "—"}</dd>
        </div>
        <div>
          <dt>Phone</dt>
          <dd>{contact.phones.map((p) => p.value).join(", ") || "—"}</dd>
        </div>
        {contact.organizationName && (
          <div>
            <dt>Organization</dt>
            <dd>{contact.organizationName}</dd>
          </div>
        )}
        {contact.addresses.map((a, index) => (
          <div key={`address-${index}`}>
            <dt>Address</dt>
            <dd>{[a.line1, a.line2, a.city, a.region, a.postal, a.country].filter(Boolean).join(", ")}</dd>
          </div>
        ))}
        <div>
          <dt>Gifts</dt>
          <dd>
            {contact.totalTransactionCount},{" "}
            {money(contact.totalTransactionValue, me.value?.currency ?? "USD")} in all
          </dd>
        </div>
        <div>
          <dt>E-mail consent</dt>
          <dd>{words(contact.emailConsent)}</dd>
        </div>
        <div>
          <dt>Text message consent</dt>
          <dd>{words(contact.smsConsent)}</dd>
        </div>
        <div>
          <dt>Other communication</dt>
          <dd>{words(contact.communicationConsent)}</dd>
        </div>
      </dl>
      <h2>Payments</h2>
      <ul class="plain">
        {payments.items.map((p) => (
          <li key={p.paymentID}>
            <a href={to(`payments/${p.paymentID}`)}>
              {money(p.amount, p.currency)} on {when(p.date)}
            </a>{" "}
            — {words(p.status)}, {p.form}
          </li>
        ))}
      </ul>
      <ListFooter {...payments} count={payments.items.length} noun="payments" />
      <h2>Recurring gifts</h2>
      <ul class="plain">
        {gifts.items.map((s) => (
          <li key={s.id}>
            <a href={to(`recurring/${s.id}`)}>
              {money(s.amount, s.currency)} {words(s.frequency).toLowerCase()}
            </a>{" "}
            — {words(s.status)}
          </li>
        ))}
      </ul>
      <ListFooter {...gifts} count={gifts.items.length} noun="recurring gifts" />
      {answers.length > 0 && (
        <>
          <h2>Answers to the forms' questions</h2>
          <dl class="details">
            {answers.map((a, index) => (
              <div key={`${a.id}-${index}`}>
                <dt>{a.title}</dt>
                <dd>
                  {Array.isArray(a.value) ? a.value.join(", ") : a.value} <small>({when(a.date)})</small>
                </dd>
              </div>
            ))}
          </dl>
        </>
      )}
    </>
  );
}
