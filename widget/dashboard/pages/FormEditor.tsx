import type { ComponentChildren } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import "../../app/app.css";
import type { CompiledCatalog } from "../../../shared/i18n/format.js";
import { App } from "../../app/App.js";
import { setLocale } from "../../app/locale.js";
import { createCheckout } from "../../app/store.js";
import type { Boot, FormView } from "../../app/view.js";
import { ApiFailure, call } from "../api.js";
import { to } from "../router.js";
import { ErrorNote, ListEditor, messageOf, Notice, PageTitle } from "../ui.js";

/**
 * The form editor: the form's fields beside a live preview, the checkout's own components (widget/app)
 * rendered from the draft as it is typed. Each change asks `POST /v1/forms/{id}/preview`, which checks the
 * draft with the rules the save uses: its problems are shown at their fields before saving, and its answer is
 * the view the checkout draws. Saving is the same `PUT /v1/forms/{id}` an integrator sends.
 */

type Draft = Record<string, unknown>;

interface Preview {
  view: FormView;
  language: string;
  messages: CompiledCatalog;
  input: Draft;
}

const FREQUENCIES = ["ONE_TIME", "DAILY", "WEEKLY", "MONTHLY", "ANNUALLY"] as const;
const AMOUNT_FIELD: Record<(typeof FREQUENCIES)[number], string> = {
  ONE_TIME: "oneTimeAmounts",
  DAILY: "dailyAmounts",
  WEEKLY: "weeklyAmounts",
  MONTHLY: "monthlyAmounts",
  ANNUALLY: "annuallyAmounts",
};
const FREQUENCY_NAMES: Record<string, string> = {
  ONE_TIME: "One-time",
  DAILY: "Daily",
  WEEKLY: "Weekly",
  MONTHLY: "Monthly",
  ANNUALLY: "Yearly",
};

/** The fields the editor shows with their problems; the others' problems are listed above the button. */
const SHOWN_FIELDS = new Set([
  "title",
  "description",
  "funds",
  "frequencies",
  ...Object.values({
    ONE_TIME: "oneTimeAmounts",
    DAILY: "dailyAmounts",
    WEEKLY: "weeklyAmounts",
    MONTHLY: "monthlyAmounts",
    ANNUALLY: "annuallyAmounts",
  }),
  "eventDate",
  "location",
  "tickets",
  "promoCodes",
  "givingLevels",
  "customInputs",
  "goal",
  "enableFundraisingBar",
  "enableCoverFees",
  "enableAnonymous",
  "enableTribute",
  "enableMonthlyUpsell",
  "active",
  "color",
  "headerImage",
  "enableCustomEmail",
  "replyToAddress",
  "emailSubject",
  "customMessage",
]);

/** The field a detail of a 400 is about: its first word (`tickets[1].price must…` → tickets). */
export const fieldOf = (detail: string): string => detail.split(/[ .[]/)[0] ?? "";

const numbers = (text: string): number[] =>
  text
    .split(/[,\s]+/)
    .filter(Boolean)
    .map(Number);

interface Ticket {
  name: string;
  price: number;
  ticketType: "INDIVIDUAL" | "GROUP";
  groupSize?: number | null;
  quantity?: number | null;
}

interface GivingLevel {
  title: string;
  amount: number;
  description?: string;
}

interface Question {
  id?: string;
  title?: string;
  inputType: "short_text" | "long_text" | "single_select" | "multi_select";
  required?: boolean;
  options?: string[];
}

interface PromoCode {
  code: string;
  discountType: "percentage" | "amount";
  discountValue: number;
}

export default function FormEditor(props: { formId: string }) {
  const path = `/v1/forms/${encodeURIComponent(props.formId)}`;
  const [draft, setDraft] = useState<Draft | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [width, setWidth] = useState<"phone" | "desktop">("desktop");
  const [saving, setSaving] = useState(false);
  const seq = useRef(0);

  // The form as saved: the editor's starting point.
  useEffect(() => {
    call<Preview>("POST", `${path}/preview`, {})
      .then((answer) => {
        setDraft(answer.input);
        setPreview(answer);
      })
      .catch((err: unknown) => setError(messageOf(err)));
  }, [path]);

  // Every change: checked and previewed, a moment after the typing stops.
  useEffect(() => {
    if (!draft) return;
    const mine = ++seq.current;
    const timer = setTimeout(() => {
      call<Preview>("POST", `${path}/preview`, draft)
        .then((answer) => {
          if (mine !== seq.current) return;
          setPreview(answer);
          setProblems([]);
        })
        .catch((err: unknown) => {
          if (mine !== seq.current) return;
          if (err instanceof ApiFailure && err.status === 400)
            setProblems(Array.isArray(err.body.details) ? err.body.details.map(String) : [err.message]);
          else setError(messageOf(err));
        });
    }, 300);
    return () => clearTimeout(timer);
  }, [draft, path]);

  if (!draft)
    return (
      <>
        <PageTitle title="Edit a form">Edit a form</PageTitle>
        <ErrorNote message={error} />
        {!error && <p aria-busy="true">Loading…</p>}
      </>
    );

  const set = (field: string, value: unknown) => {
    setNotice(null);
    setDraft({ ...draft, [field]: value });
  };
  const text = (field: string) => (typeof draft[field] === "string" ? (draft[field] as string) : "");
  const flag = (field: string) => draft[field] === true;
  const errorsAt = (field: string) => problems.filter((p) => fieldOf(p) === field);
  const fieldProps = (field: string) => {
    const errors = errorsAt(field);
    return {
      id: `form-${field}`,
      "aria-invalid": errors.length > 0 ? true : undefined,
      "aria-describedby": errors.length > 0 ? `form-${field}-error` : undefined,
    };
  };
  const event = draft.formType === "EVENT" || draft.formType === "event";
  const frequencies = (Array.isArray(draft.frequencies) ? draft.frequencies : ["ONE_TIME"]) as string[];
  const tickets = (Array.isArray(draft.tickets) ? draft.tickets : []) as Ticket[];
  const promoCodes = (Array.isArray(draft.promoCodes) ? draft.promoCodes : []) as PromoCode[];
  const levels = (Array.isArray(draft.givingLevels) ? draft.givingLevels : []) as GivingLevel[];
  const questions = (Array.isArray(draft.customInputs) ? draft.customInputs : []) as Question[];
  const givingLevels = draft.amountType === "giving_level" || draft.formType === "CROWDFUNDING_FORM";

  const save = async () => {
    setSaving(true);
    setError(null);
    try {
      await call("PUT", path, draft);
      setNotice("Saved: the form's page shows these changes now.");
    } catch (err) {
      if (err instanceof ApiFailure && err.status === 400 && Array.isArray(err.body.details))
        setProblems(err.body.details.map(String));
      setError(messageOf(err));
    } finally {
      setSaving(false);
    }
  };

  const editor = (
    <form
      class="editor"
      aria-label="The form's fields"
      onSubmit={(e) => {
        e.preventDefault();
        void save();
      }}
    >
      <Row problems={problems} field="title" label="Title">
        <input
          {...fieldProps("title")}
          value={text("title")}
          onInput={(e) => set("title", e.currentTarget.value)}
        />
      </Row>
      <Row problems={problems} field="description" label="Description">
        <textarea
          {...fieldProps("description")}
          rows={3}
          value={text("description")}
          onInput={(e) => set("description", e.currentTarget.value)}
        />
      </Row>
      <Row problems={problems} field="funds" label="Funds" hint="One per line: what donors can give to.">
        <textarea
          {...fieldProps("funds")}
          rows={2}
          value={(Array.isArray(draft.funds) ? draft.funds : []).join("\n")}
          onInput={(e) =>
            set(
              "funds",
              e.currentTarget.value.split("\n").filter((f) => f.trim() !== ""),
            )
          }
        />
      </Row>
      {!event && (
        <fieldset>
          <legend>How often donors can give</legend>
          {FREQUENCIES.map((f) => (
            <label key={f} class="choice">
              <input
                type="checkbox"
                checked={frequencies.includes(f)}
                onChange={(e) =>
                  set(
                    "frequencies",
                    e.currentTarget.checked
                      ? FREQUENCIES.filter((x) => x === f || frequencies.includes(x))
                      : frequencies.filter((x) => x !== f),
                  )
                }
              />{" "}
              {FREQUENCY_NAMES[f]}
            </label>
          ))}
          <FieldErrors field="frequencies" errors={errorsAt("frequencies")} />
        </fieldset>
      )}
      {!event &&
        frequencies.map((f) => {
          const field = AMOUNT_FIELD[f as (typeof FREQUENCIES)[number]];
          if (!field) return null;
          const value = Array.isArray(draft[field]) ? (draft[field] as number[]).join(", ") : "";
          return (
            <Row
              key={field}
              problems={problems}
              field={field}
              label={`${FREQUENCY_NAMES[f]} amounts`}
              hint="Separated by commas, e.g. 25, 50, 100"
            >
              <AmountList props={fieldProps(field)} value={value} onChange={(list) => set(field, list)} />
            </Row>
          );
        })}
      {!event && (
        <label class="choice">
          <input
            type="checkbox"
            checked={flag("allowCustomAmount")}
            onChange={(e) => set("allowCustomAmount", e.currentTarget.checked)}
          />{" "}
          Donors may type their own amount
        </label>
      )}
      {event && (
        <>
          <Row problems={problems} field="eventDate" label="Date">
            <input
              {...fieldProps("eventDate")}
              type="date"
              value={text("eventDate")}
              onInput={(e) => set("eventDate", e.currentTarget.value || null)}
            />
          </Row>
          <Row problems={problems} field="location" label="Place">
            <input
              {...fieldProps("location")}
              value={text("location")}
              onInput={(e) => set("location", e.currentTarget.value)}
            />
          </Row>
          <TicketsEditor
            items={tickets}
            errors={errorsAt("tickets")}
            onChange={(list) => set("tickets", list)}
          />
          <PromoEditor
            items={promoCodes}
            errors={errorsAt("promoCodes")}
            onChange={(list) => set("promoCodes", list)}
          />
        </>
      )}
      {givingLevels && (
        <LevelsEditor
          items={levels}
          errors={errorsAt("givingLevels")}
          onChange={(list) => set("givingLevels", list)}
        />
      )}
      <QuestionsEditor
        items={questions}
        errors={errorsAt("customInputs")}
        onChange={(list) => set("customInputs", list)}
      />
      <Row problems={problems} field="goal" label="Goal" hint="Shown as a progress bar when the bar is on.">
        <input
          {...fieldProps("goal")}
          type="number"
          min="0"
          step="0.01"
          value={draft.goal === null || draft.goal === undefined ? "" : String(draft.goal)}
          onInput={(e) => set("goal", e.currentTarget.value === "" ? null : Number(e.currentTarget.value))}
        />
      </Row>
      {[
        ["enableFundraisingBar", "Show the goal's progress bar"],
        ["enableCoverFees", "Offer to cover the processing fee"],
        ["enableAnonymous", "Let donors give anonymously"],
        ["enableTribute", "Let donors dedicate the gift (in honor or memory)"],
        ["enableMonthlyUpsell", "Suggest a monthly gift instead"],
        ["active", "The form takes gifts (on)"],
      ].map(([field, label]) => (
        <div key={field}>
          <label class="choice">
            <input
              type="checkbox"
              checked={flag(field as string)}
              onChange={(e) => set(field as string, e.currentTarget.checked)}
            />{" "}
            {label}
          </label>
          <FieldErrors field={field as string} errors={errorsAt(field as string)} />
        </div>
      ))}
      <Row problems={problems} field="color" label="Colour" hint="#rrggbb">
        <input
          {...fieldProps("color")}
          value={text("color")}
          onInput={(e) => set("color", e.currentTarget.value)}
        />
      </Row>
      <Row problems={problems} field="headerImage" label="Header image (https URL)">
        <input
          {...fieldProps("headerImage")}
          type="url"
          value={text("headerImage")}
          onInput={(e) => set("headerImage", e.currentTarget.value || null)}
        />
      </Row>
      <fieldset>
        <legend>Receipt</legend>
        <label class="choice">
          <input
            type="checkbox"
            checked={flag("enableCustomEmail")}
            onChange={(e) => set("enableCustomEmail", e.currentTarget.checked)}
          />{" "}
          Use this form's own receipt words
        </label>
        <FieldErrors field="enableCustomEmail" errors={errorsAt("enableCustomEmail")} />
        {flag("enableCustomEmail") && (
          <>
            <Row problems={problems} field="replyToAddress" label="Reply-to address">
              <input
                {...fieldProps("replyToAddress")}
                type="email"
                value={text("replyToAddress")}
                onInput={(e) => set("replyToAddress", e.currentTarget.value)}
              />
            </Row>
            <Row problems={problems} field="emailSubject" label="Subject">
              <input
                {...fieldProps("emailSubject")}
                value={text("emailSubject")}
                onInput={(e) => set("emailSubject", e.currentTarget.value)}
              />
            </Row>
            <Row problems={problems} field="customMessage" label="Message">
              <textarea
                {...fieldProps("customMessage")}
                rows={4}
                value={text("customMessage")}
                onInput={(e) => set("customMessage", e.currentTarget.value)}
              />
            </Row>
          </>
        )}
      </fieldset>
      <Advanced draft={draft} onChange={(next) => setDraft(next)} />
      <OtherProblems problems={problems.filter((p) => !SHOWN_FIELDS.has(fieldOf(p)))} />
      <ErrorNote message={error} />
      <Notice message={notice} />
      <button type="submit" disabled={saving || problems.length > 0}>
        Save
      </button>
      <a href={to(`forms/${props.formId}/share`)}>Share</a>
    </form>
  );

  return (
    <>
      <PageTitle title={`Edit ${text("title") || "a form"}`}>Edit {text("title") || "a form"}</PageTitle>
      <p>
        <a href={to("forms")}>Back to forms</a>
      </p>
      <div class="editor-layout">
        {editor}
        <section class="preview" aria-labelledby="preview-title">
          <h2 id="preview-title">Preview</h2>
          <fieldset class="segmented">
            <legend class="visually-hidden">Preview width</legend>
            <button
              type="button"
              class="secondary"
              aria-pressed={width === "phone"}
              onClick={() => setWidth("phone")}
            >
              Phone
            </button>
            <button
              type="button"
              class="secondary"
              aria-pressed={width === "desktop"}
              onClick={() => setWidth("desktop")}
            >
              Desktop
            </button>
          </fieldset>
          {problems.length > 0 && <p class="muted">The preview shows the last version without problems.</p>}
          <div class={`preview-frame ${width}`} data-preview>
            {preview && <CheckoutPreview preview={preview} />}
          </div>
        </section>
      </div>
    </>
  );
}

/** A field of the editor: its label, its control, a hint, and the draft's problems with it. */
function Row(p: {
  field: string;
  label: string;
  children: ComponentChildren;
  hint?: string;
  problems: string[];
}) {
  return (
    <div class="field">
      <label for={`form-${p.field}`}>{p.label}</label>
      {p.children}
      {p.hint && <small class="hint">{p.hint}</small>}
      <FieldErrors field={p.field} errors={p.problems.filter((d) => fieldOf(d) === p.field)} />
    </div>
  );
}

function FieldErrors(props: { field: string; errors: string[] }) {
  if (props.errors.length === 0) return null;
  return (
    <ul id={`form-${props.field}-error`} class="error field-errors">
      {props.errors.map((e) => (
        <li key={e}>{e}</li>
      ))}
    </ul>
  );
}

function OtherProblems(props: { problems: string[] }) {
  if (props.problems.length === 0) return null;
  return (
    <div class="error" role="alert">
      <p>Fix these before saving:</p>
      <ul>
        {props.problems.map((p) => (
          <li key={p}>{p}</li>
        ))}
      </ul>
    </div>
  );
}

/** A list of amounts typed as text; kept as typed until it reads as numbers. */
function AmountList(props: {
  props: Record<string, unknown>;
  value: string;
  onChange: (list: number[]) => void;
}) {
  const [text, setText] = useState(props.value);
  return (
    <input
      {...props.props}
      inputMode="decimal"
      value={text}
      onInput={(e) => {
        setText(e.currentTarget.value);
        props.onChange(numbers(e.currentTarget.value));
      }}
    />
  );
}

/** A list editor's list, its problems and where its changes go. */
type ListProps<T> = { items: T[]; errors: string[]; onChange: (list: T[]) => void };

function TicketsEditor(props: ListProps<Ticket>) {
  return (
    <ListEditor<Ticket>
      legend="Tickets"
      items={props.items}
      onChange={props.onChange}
      noun="ticket"
      add="Add a ticket type"
      newItem={(n) => ({ name: `Ticket ${n + 1}`, price: 10, ticketType: "INDIVIDUAL" })}
      errors={<FieldErrors field="tickets" errors={props.errors} />}
      row={(ticket, i, change) => (
        <>
          <label>
            Ticket {i + 1} name
            <input value={ticket.name} onInput={(e) => change({ name: e.currentTarget.value })} />
          </label>
          <label>
            Ticket {i + 1} price
            <input
              type="number"
              min="0"
              step="0.01"
              value={String(ticket.price)}
              onInput={(e) => change({ price: Number(e.currentTarget.value) })}
            />
          </label>
          <label>
            Ticket {i + 1} admits
            <input
              type="number"
              min="1"
              value={String(ticket.ticketType === "GROUP" ? (ticket.groupSize ?? 2) : 1)}
              onInput={(e) => {
                const n = Math.max(1, Math.floor(Number(e.currentTarget.value) || 1));
                change(
                  n > 1
                    ? { ticketType: "GROUP", groupSize: n }
                    : { ticketType: "INDIVIDUAL", groupSize: null },
                );
              }}
            />
          </label>
          <label>
            Ticket {i + 1} how many for sale (empty: no limit)
            <input
              type="number"
              min="1"
              value={ticket.quantity ? String(ticket.quantity) : ""}
              onInput={(e) =>
                change({ quantity: e.currentTarget.value ? Number(e.currentTarget.value) : null })
              }
            />
          </label>
        </>
      )}
    />
  );
}

function PromoEditor(props: ListProps<PromoCode>) {
  return (
    <ListEditor<PromoCode>
      legend="Promo codes"
      items={props.items}
      onChange={props.onChange}
      noun="code"
      add="Add a promo code"
      newItem={(n) => ({ code: `CODE${n + 1}`, discountType: "percentage", discountValue: 10 })}
      errors={<FieldErrors field="promoCodes" errors={props.errors} />}
      row={(code, i, change) => (
        <>
          <label>
            Code {i + 1}
            <input value={code.code} onInput={(e) => change({ code: e.currentTarget.value })} />
          </label>
          <label>
            Code {i + 1} discount
            <select
              value={code.discountType}
              onChange={(e) => change({ discountType: e.currentTarget.value as PromoCode["discountType"] })}
            >
              <option value="percentage">Percent off</option>
              <option value="amount">Amount off</option>
            </select>
          </label>
          <label>
            Code {i + 1} value
            <input
              type="number"
              min="0"
              step="0.01"
              value={String(code.discountValue)}
              onInput={(e) => change({ discountValue: Number(e.currentTarget.value) })}
            />
          </label>
        </>
      )}
    />
  );
}

function LevelsEditor(props: ListProps<GivingLevel>) {
  return (
    <ListEditor<GivingLevel>
      legend="Giving levels"
      items={props.items}
      onChange={props.onChange}
      noun="level"
      add="Add a giving level"
      newItem={(n) => ({ title: `Level ${n + 1}`, amount: 50, description: "" })}
      errors={<FieldErrors field="givingLevels" errors={props.errors} />}
      row={(level, i, change) => (
        <>
          <label>
            Level {i + 1} name
            <input value={level.title} onInput={(e) => change({ title: e.currentTarget.value })} />
          </label>
          <label>
            Level {i + 1} amount
            <input
              type="number"
              min="0"
              step="0.01"
              value={String(level.amount)}
              onInput={(e) => change({ amount: Number(e.currentTarget.value) })}
            />
          </label>
          <label>
            Level {i + 1} description
            <input
              value={level.description ?? ""}
              onInput={(e) => change({ description: e.currentTarget.value })}
            />
          </label>
        </>
      )}
    />
  );
}

const QUESTION_TYPES: [Question["inputType"], string][] = [
  ["short_text", "Short answer"],
  ["long_text", "Long answer"],
  ["single_select", "One choice"],
  ["multi_select", "Several choices"],
];

function QuestionsEditor(props: ListProps<Question>) {
  return (
    <ListEditor<Question>
      legend="Questions for donors"
      items={props.items}
      onChange={props.onChange}
      noun="question"
      rowKey={(q) => q.id}
      add="Add a question"
      newItem={(n) => ({ title: `Question ${n + 1}`, inputType: "short_text", required: false })}
      errors={<FieldErrors field="customInputs" errors={props.errors} />}
      row={(q, i, change) => (
        <>
          <label>
            Question {i + 1}
            <input value={q.title ?? ""} onInput={(e) => change({ title: e.currentTarget.value })} />
          </label>
          <label>
            Question {i + 1} answer
            <select
              value={q.inputType}
              onChange={(e) => change({ inputType: e.currentTarget.value as Question["inputType"] })}
            >
              {QUESTION_TYPES.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </label>
          {(q.inputType === "single_select" || q.inputType === "multi_select") && (
            <label>
              Question {i + 1} choices (one per line)
              <textarea
                rows={3}
                value={(q.options ?? []).join("\n")}
                onInput={(e) =>
                  change({ options: e.currentTarget.value.split("\n").filter((o) => o.trim() !== "") })
                }
              />
            </label>
          )}
          <label class="choice">
            <input
              type="checkbox"
              checked={q.required === true}
              onChange={(e) => change({ required: e.currentTarget.checked })}
            />{" "}
            Question {i + 1} must be answered
          </label>
        </>
      )}
    />
  );
}

/** Everything the API takes, as JSON: for what the fields above do not show (levels, questions, FAQs…). */
function Advanced(props: { draft: Draft; onChange: (draft: Draft) => void }) {
  const [text, setText] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const shown = text ?? JSON.stringify(props.draft, null, 2);
  return (
    <details>
      <summary>Every field (JSON)</summary>
      <label for="form-json">The form as the API takes it</label>
      <textarea
        id="form-json"
        rows={14}
        spellcheck={false}
        value={shown}
        onInput={(e) => {
          const value = e.currentTarget.value;
          setText(value);
          try {
            const parsed = JSON.parse(value) as unknown;
            if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed))
              throw new Error("not an object");
            setError(null);
            props.onChange(parsed as Draft);
          } catch {
            setError("This is not a JSON object yet: the other fields keep their values until it is.");
          }
        }}
        onBlur={() => !error && setText(null)}
      />
      <ErrorNote message={error} />
    </details>
  );
}

/** The checkout's own App, drawn from the preview's view: what donors would see (nothing can be sent from it). */
function CheckoutPreview(props: { preview: Preview }) {
  const { view, language, messages } = props.preview;
  const checkout = useMemo(() => {
    setLocale({ language, currency: view.currency, messages });
    const boot: Boot = { view, language, messages };
    return createCheckout(boot, {});
  }, [view, language, messages]);
  return <App c={checkout} embedded={false} />;
}
