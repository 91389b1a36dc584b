import { useEffect, useState } from "preact/hooks";
import { FORM_TITLE_MAX } from "../../../shared/formLimits.js";
import { ApiFailure, call, get, query } from "../api.js";
import { money, orgNow, when, words } from "../format.js";
import { ListFooter, usePagedList } from "../list.js";
import type { PageProps } from "../page.js";
import { navigate, to } from "../router.js";
import { can } from "../session.js";
import { ConfirmInline, CopyButton, ErrorNote, Field, messageOf, Notice, PageTitle } from "../ui.js";

/**
 * Forms: the organization's forms with their state; a new form, turning one off or on, deleting one (soft,
 * as the API does); and a form's Share page: its hosted URL, the iframe embed, the overlay snippet, and
 * prefilled links made through the links API.
 */

interface FormSummary {
  formID: string;
  formUrl: string;
  title: string;
  formType: string;
  active: boolean;
  goal: number | null;
  funds: string[];
  frequencies: string[];
  createdAt: string;
}

interface FormFull extends FormSummary {
  embedHTML: string;
}

interface Link {
  linkID: string;
  name: string;
  url: string;
  destinationType: string;
  prefill: Record<string, unknown>;
  active: boolean;
  createdAt: string;
}

const KINDS: Record<string, string> = {
  EMBED_FORM: "Donation form",
  CROWDFUNDING_FORM: "Giving levels",
  PRODUCT: "Sponsorship",
  EVENT: "Event",
};

/** What a form raised (GET /v1/analytics/forms): in the organization's currency, and in any it used before. */
interface FormTotals {
  raised: number;
  gifts: number;
  otherCurrencies?: { currency: string; raised: number }[];
}

export default function Forms(props: PageProps) {
  const [id, section] = props.rest.split("/");
  if (id && section === "share") return <Share formId={decodeURIComponent(id)} />;
  if (id && section === "edit") return <Editor formId={decodeURIComponent(id)} />;
  return <FormList />;
}

type EditorModule = typeof import("./FormEditor.js");
let editorModule: EditorModule | undefined;

/** The editor and the checkout's components it previews with: a chunk of their own, loaded when first opened. */
function Editor(props: { formId: string }) {
  const [module, setModule] = useState<EditorModule | undefined>(editorModule);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    if (editorModule) return;
    import("./FormEditor.js")
      .then((m) => {
        editorModule = m;
        setModule(m);
      })
      .catch((err: unknown) => setError(messageOf(err)));
  }, []);
  if (error) return <ErrorNote message={`The editor could not be loaded: ${error}`} />;
  if (!module) return <p aria-busy="true">Loading the editor…</p>;
  // Finance reads forms but may not change them: the editor is shown read-only, with no Save.
  return <module.default formId={props.formId} readOnly={!can("forms:write")} />;
}

function FormList() {
  const list = usePagedList<FormSummary>("/v1/forms", "forms", {});
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const shown = list.items;
  // What each form on the page raised (one call per page of forms; for those who may read analytics or payments).
  const [raised, setRaised] = useState<Record<string, FormTotals>>({});
  const [currency, setCurrency] = useState("USD");
  useEffect(() => {
    const ids = list.items.map((f) => f.formID).filter((id) => !(id in raised));
    if (!(can("analytics:read") || can("donations:read")) || ids.length === 0) return;
    get<{ currency: string; forms: ({ formID: string } & FormTotals)[] }>(
      `/v1/analytics/forms${query({ formIDs: ids.slice(0, 100).join(",") })}`,
    )
      .then((answer) => {
        setCurrency(answer.currency);
        setRaised((old) => ({ ...old, ...Object.fromEntries(answer.forms.map((f) => [f.formID, f])) }));
      })
      .catch(() => undefined);
  }, [list.items]);
  const writable = can("forms:write");

  const act = async (work: () => Promise<void>, done: string) => {
    setError(null);
    setNotice(null);
    try {
      await work();
      setNotice(done);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  const setActive = (form: FormSummary, active: boolean) =>
    act(
      async () => {
        await call("PUT", `/v1/forms/${encodeURIComponent(form.formID)}`, { active });
        list.update((items) => items.map((f) => (f.formID === form.formID ? { ...f, active } : f)));
      },
      `${form.title} is ${active ? "on: donors can give" : "off: its page says it is closed"}.`,
    );
  /**
   * A copy of the whole form (as the API takes it), turned off until someone turns it on, titled after it
   * with the time (the original's title shortened to leave room); a title already taken gets a number.
   */
  const duplicate = (form: FormSummary) =>
    act(async () => {
      const current = await call<{ input: Record<string, unknown> }>(
        "POST",
        `/v1/forms/${encodeURIComponent(form.formID)}/preview`,
        {},
      );
      const stamp = orgNow().slice(0, 16).replace("T", " ");
      for (let n = 1; ; n++) {
        const suffix = ` (copy${n > 1 ? ` ${n}` : ""} ${stamp})`;
        const title = form.title.slice(0, FORM_TITLE_MAX - suffix.length).trimEnd() + suffix;
        try {
          const copy = await call<{ formID: string }>("POST", "/v1/forms", {
            ...current.input,
            title,
            active: false,
          });
          navigate(to(`forms/${copy.formID}/edit`));
          return;
        } catch (err) {
          if (!(err instanceof ApiFailure && err.status === 409 && n < 9)) throw err;
        }
      }
    }, `${form.title} is copied; the copy is off until you turn it on.`);
  const remove = (form: FormSummary) =>
    act(async () => {
      await call("DELETE", `/v1/forms/${encodeURIComponent(form.formID)}`);
      list.update((items) => items.filter((f) => f.formID !== form.formID));
      setDeleting(null);
    }, `${form.title} is deleted; its page now says it no longer exists.`);

  return (
    <>
      <PageTitle title="Forms">Forms</PageTitle>
      {writable && <NewForm />}
      <Notice message={notice} />
      <ErrorNote message={error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">The organization's forms, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Form</th>
              <th scope="col">Kind</th>
              <th scope="col">State</th>
              <th scope="col">Raised</th>
              <th scope="col">Gifts</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((form) => (
              <tr key={form.formID}>
                <td>
                  <a
                    id={`form-title-${form.formID}`}
                    href={to(`forms/${form.formID}/${writable ? "edit" : "share"}`)}
                  >
                    {form.title}
                  </a>
                  <br />
                  <small>Made {when(form.createdAt)}</small>
                </td>
                <td>{KINDS[form.formType] ?? words(form.formType)}</td>
                <td>{form.active ? "On" : "Off"}</td>
                <td>
                  {raised[form.formID] ? money(raised[form.formID].raised, currency) : "—"}
                  {form.goal !== null && <small> of {money(form.goal, currency)}</small>}
                  {raised[form.formID]?.otherCurrencies?.map((other) => (
                    <small key={other.currency}> + {money(other.raised, other.currency)}</small>
                  ))}
                </td>
                <td>{raised[form.formID]?.gifts ?? "—"}</td>
                <td>
                  <a href={to(`forms/${form.formID}/share`)} aria-describedby={`form-title-${form.formID}`}>
                    Share
                  </a>{" "}
                  <a
                    href={to("payments", { formID: form.formID })}
                    aria-describedby={`form-title-${form.formID}`}
                  >
                    Its payments
                  </a>
                  {writable &&
                    (deleting === form.formID ? (
                      <>
                        {" "}
                        <ConfirmInline
                          question={`Delete ${form.title}?`}
                          detail="Its page stops taking gifts."
                          yes="Yes, delete"
                          onYes={() => remove(form)}
                          onKeep={() => setDeleting(null)}
                          trigger={`delete-${form.formID}`}
                        />
                      </>
                    ) : (
                      <>
                        {" "}
                        <button
                          type="button"
                          class="secondary"
                          aria-describedby={`form-title-${form.formID}`}
                          onClick={() => setActive(form, !form.active)}
                        >
                          {form.active ? "Turn off" : "Turn on"}
                        </button>
                        <button
                          type="button"
                          class="secondary"
                          aria-describedby={`form-title-${form.formID}`}
                          onClick={() => duplicate(form)}
                        >
                          Duplicate
                        </button>
                        <button
                          type="button"
                          class="secondary"
                          id={`delete-${form.formID}`}
                          aria-describedby={`form-title-${form.formID}`}
                          onClick={() => setDeleting(form.formID)}
                        >
                          Delete…
                        </button>
                      </>
                    ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ListFooter {...list} count={shown.length} noun="forms" />
    </>
  );
}

/**
 * What "New form" makes of each kind: the fields `POST /v1/forms` needs for it to be valid, with placeholder
 * content (one giving level, one sponsorship package, one ticket) that the editor then opens for the staff to
 * change.
 */
const NEW_FORM_KINDS: Record<string, { label: string; fields: Record<string, unknown> }> = {
  standard: { label: "Donation form", fields: { formType: "fundraising", amountType: "standard" } },
  giving_level: {
    label: "Giving levels",
    fields: {
      formType: "fundraising",
      amountType: "giving_level",
      givingLevels: [{ title: "Friend", amount: 50, description: "" }],
    },
  },
  sponsorship: {
    label: "Sponsorship (packages)",
    fields: {
      formType: "fundraising",
      amountType: "sponsorship",
      sponsorshipGroups: [
        {
          groupTitle: "Sponsors",
          description: "",
          options: [{ optionTitle: "Sponsor", amount: 500, description: "", quantity: null }],
        },
      ],
    },
  },
  event: {
    label: "Event (tickets)",
    fields: { formType: "event", tickets: [{ name: "Admission", price: 10 }] },
  },
};

function NewForm() {
  const [title, setTitle] = useState("");
  const [kind, setKind] = useState("standard");
  const [fund, setFund] = useState("General");
  const [error, setError] = useState<string | null>(null);
  return (
    <details class="new">
      <summary>New form</summary>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setError(null);
          try {
            const made = await call<{ formID: string }>("POST", "/v1/forms", {
              title,
              funds: [fund],
              ...NEW_FORM_KINDS[kind]?.fields,
            });
            navigate(to(`forms/${made.formID}/edit`));
          } catch (err) {
            setError(messageOf(err));
          }
        }}
      >
        <Field label="Title">
          {(id) => (
            <input
              id={id}
              required
              maxLength={300}
              value={title}
              onInput={(e) => setTitle(e.currentTarget.value)}
            />
          )}
        </Field>
        <Field
          label="Kind"
          hint="The editor opens on the new form, with a first level, package or ticket to change."
        >
          {(id, hint) => (
            <select
              id={id}
              aria-describedby={hint}
              value={kind}
              onChange={(e) => setKind(e.currentTarget.value)}
            >
              {Object.entries(NEW_FORM_KINDS).map(([value, k]) => (
                <option key={value} value={value}>
                  {k.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Fund" hint="What the gifts are for; the editor adds more.">
          {(id, hint) => (
            <input
              id={id}
              aria-describedby={hint}
              required
              value={fund}
              onInput={(e) => setFund(e.currentTarget.value)}
            />
          )}
        </Field>
        <ErrorNote message={error} />
        <button type="submit">Make the form</button>
      </form>
    </details>
  );
}

/** A text to copy, with a button that copies it. */
function Copyable(props: { label: string; value: string; hint: string; multiline?: boolean }) {
  const id = `copy-${props.label.replace(/\W+/g, "-").toLowerCase()}`;
  return (
    <div class="field">
      <label for={id} id={`${id}-label`}>
        {props.label}
      </label>
      {props.multiline ? (
        <textarea id={id} readOnly rows={4} value={props.value} onFocus={(e) => e.currentTarget.select()} />
      ) : (
        <input id={id} readOnly value={props.value} onFocus={(e) => e.currentTarget.select()} />
      )}
      <small class="hint">{props.hint}</small>
      <CopyButton value={props.value} confirm="status" describedBy={`${id}-label`} />
    </div>
  );
}

function Share(props: { formId: string }) {
  const [form, setForm] = useState<FormFull | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    get<FormFull>(`/v1/forms/${encodeURIComponent(props.formId)}`)
      .then(setForm)
      .catch((err: unknown) => setError(messageOf(err)));
  }, [props.formId]);
  if (!form)
    return (
      <>
        <PageTitle title="Share a form">Share a form</PageTitle>
        <ErrorNote message={error} />
        {!error && <p aria-busy="true">Loading…</p>}
      </>
    );
  const origin = new URL(form.formUrl).origin;
  const overlayFor = form.formType === "EVENT" ? "attend" : "donate";
  return (
    <>
      <PageTitle title={`Share ${form.title}`}>Share {form.title}</PageTitle>
      <p>
        <a href={to("forms")}>Back to forms</a>
      </p>
      <Copyable
        label="The form's page"
        value={form.formUrl}
        hint="A page of its own: link to it from e-mails, social posts and your site."
      />
      <Copyable
        label="Embed on your site"
        value={form.embedHTML}
        multiline
        hint="Paste into your site's HTML where the form should appear; it sizes itself."
      />
      <Copyable
        label="Open it over your site"
        value={`<script async src="${origin}/overlay.js"></script>\n<a href="?${overlayFor}&formid=${form.formID}">Give now</a>`}
        multiline
        hint="Paste the script once in your site's pages (your site must be among the organization's base URLs); any link like this one opens the form over the page."
      />
      <LinkBuilder form={form} />
    </>
  );
}

const PREFILL_FIELDS: [string, string][] = [
  ["amount", "Amount"],
  ["fund", "Fund"],
  ["firstName", "First name"],
  ["lastName", "Last name"],
  ["email", "E-mail"],
  ["utmSource", "UTM source"],
  ["utmMedium", "UTM medium"],
  ["utmCampaign", "UTM campaign"],
];

function LinkBuilder(props: { form: FormFull }) {
  const base = `/v1/forms/${encodeURIComponent(props.form.formID)}/links`;
  const [links, setLinks] = useState<Link[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [name, setName] = useState("");
  const [frequency, setFrequency] = useState("");
  const [prefill, setPrefill] = useState<Record<string, string>>({});
  const [error, setError] = useState<string | null>(null);
  const [made, setMade] = useState<Link | null>(null);
  const load = async (after?: string) => {
    const page = await get<{ links: Link[]; nextCursor: string | null }>(
      `${base}${query({ limit: 20, cursor: after })}`,
    );
    setLinks((old) => (after ? [...old, ...page.links] : page.links));
    setCursor(page.nextCursor);
  };
  useEffect(() => {
    load().catch((err: unknown) => setError(messageOf(err)));
  }, [base]);

  const create = async (event: Event) => {
    event.preventDefault();
    setError(null);
    const values: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(prefill))
      if (value.trim()) values[key] = key === "amount" ? Number(value) : value.trim();
    if (frequency) values.frequency = frequency;
    try {
      const link = await call<Link>("POST", base, {
        ...(name.trim() ? { name: name.trim() } : {}),
        prefill: values,
      });
      setMade(link);
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section aria-labelledby="links-title">
      <h2 id="links-title">Prefilled links</h2>
      {can("forms:write") && (
        <form onSubmit={create}>
          <p>A link that opens the form with some answers filled in, for a campaign or a person.</p>
          <Field label="Link name">
            {(id) => (
              <input id={id} maxLength={200} value={name} onInput={(e) => setName(e.currentTarget.value)} />
            )}
          </Field>
          {props.form.frequencies.length > 1 && (
            <Field label="Frequency">
              {(id) => (
                <select id={id} value={frequency} onChange={(e) => setFrequency(e.currentTarget.value)}>
                  <option value="">As the form</option>
                  {props.form.frequencies.map((f) => (
                    <option key={f} value={f}>
                      {words(f)}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          )}
          {PREFILL_FIELDS.map(([key, label]) => (
            <Field key={key} label={label}>
              {(id) => (
                <input
                  id={id}
                  type={key === "amount" ? "number" : key === "email" ? "email" : "text"}
                  value={prefill[key] ?? ""}
                  onInput={(e) => setPrefill({ ...prefill, [key]: e.currentTarget.value })}
                />
              )}
            </Field>
          ))}
          <ErrorNote message={error} />
          <button type="submit">Make the link</button>
        </form>
      )}
      {made && (
        <Copyable
          label="The new link"
          value={made.url}
          hint="Share it: it opens the form with these answers."
        />
      )}
      <ul class="plain">
        {links.map((link) => (
          <li key={link.linkID}>
            <strong>{link.name}</strong> {link.active ? "" : "(off) "}— <code>{link.url}</code>
          </li>
        ))}
      </ul>
      {cursor && (
        <button type="button" class="secondary" onClick={() => load(cursor)}>
          Show more links
        </button>
      )}
    </section>
  );
}
