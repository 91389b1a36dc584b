import { type ComponentChildren, type JSX, options } from "preact";
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import "../../app/app.css";
import "./FormEditor.css";
import { EVENT_DETAILS_MAX, QUESTION_ID_MAX } from "../../../shared/formLimits.js";
import type { CompiledCatalog } from "../../../shared/i18n/format.js";
import { App } from "../../app/App.js";
import { setLocale } from "../../app/locale.js";
import { createCheckout } from "../../app/store.js";
import type { Boot, FormView } from "../../app/view.js";
import { ApiFailure, call, detailsAbout, fieldOf } from "../api.js";
import { to } from "../router.js";
import { ErrorNote, ListEditor, messageOf, Notice, PageTitle } from "../ui.js";

/**
 * The form editor: the form's fields beside a live preview, the checkout's own components (widget/app)
 * rendered from the draft as it is typed. Each change asks `POST /v1/forms/{id}/preview`, which checks the
 * draft with the rules the save uses: its problems are shown at their fields before saving, and its answer is
 * the view the checkout draws. Saving is the same `PUT /v1/forms/{id}` an integrator sends. Opened by someone
 * who may read forms but not change them (`readOnly`), every field is disabled and there is no Save.
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
  "startTime",
  "endTime",
  "timeZone",
  "enableTimeAndLocation",
  "location",
  "eventDetails",
  "sponsorshipGroups",
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
  "monthlyUpsellRatio",
  "monthlyUpsellMinimum",
  "defaultAmount",
  "defaultFrequency",
  "faqs",
  "enableDonorList",
  "enableOrganizationName",
  "enablePhone",
  "enableBillingAddress",
  "enableCountryDropdown",
  "active",
  "color",
  "headerImage",
  "enableCustomEmail",
  "replyToAddress",
  "emailSubject",
  "customMessage",
]);

/** The whole path a detail is about (`tickets[1].price must…` → tickets[1].price). */
export const pathOf = (detail: string): string => detail.split(" ")[0] ?? "";
/** The id of a field's control by its path (`sponsorshipGroups[0].options[1].amount` → form-sponsorshipGroups-0-options-1-amount). */
const idOf = (path: string): string => `form-${path.replace(/[[\].]+/g, "-").replace(/-$/, "")}`;

/**
 * The paths of a list's items that the list editors show at their own field (each other problem of the list
 * is shown under the list).
 */
const ITEM_FIELDS: Record<string, RegExp> = {
  tickets: /^tickets\[\d+\]\.(name|price|groupSize|quantity|maxPerOrder|fairMarketValue|description)$/,
  promoCodes: /^promoCodes\[\d+\]\.(code|discountType|discountValue|quantity|applicableTickets(\[\d+\])?)$/,
  givingLevels: /^givingLevels\[\d+\]\.(title|amount|description)$/,
  sponsorshipGroups:
    /^sponsorshipGroups\[\d+\]\.(groupTitle|description|options|options\[\d+\]\.(optionTitle|amount|description|quantity))$/,
  customInputs: /^customInputs\[\d+\]\.(id|title|inputType|options(\[\d+\])?)$/,
  faqs: /^faqs\[\d+\]\.(question|answer)$/,
};

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
  maxPerOrder?: number | null;
  fairMarketValue?: number | null;
  description?: string;
}

interface Faq {
  question: string;
  answer: string;
}

interface SponsorshipOption {
  optionTitle: string;
  amount: number;
  description?: string;
  quantity?: number | null;
}

interface SponsorshipGroup {
  groupTitle: string;
  description?: string;
  options: SponsorshipOption[];
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
  quantity?: number | null;
  applicableTickets?: string[];
}

/** A limit typed as a whole number; empty is no limit (null). */
const limit = (value: string): number | null => (value.trim() === "" ? null : Number(value));
const limitText = (value: number | null | undefined): string =>
  value === null || value === undefined ? "" : String(value);
/** An amount typed in a field that may be left empty (null): a default amount, a minimum, a ticket's worth. */
const amountOrNull = (value: string): number | null => (value.trim() === "" ? null : Number(value));

export default function FormEditor(props: { formId: string; readOnly?: boolean }) {
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
          // A preview that failed before (the server unreachable a moment) is no longer the news.
          setError(null);
        })
        .catch((err: unknown) => {
          if (mine !== seq.current) return;
          // 409: a change the save would refuse for what is sold (a ticket type renamed, ...), at its field too.
          if (err instanceof ApiFailure && (err.status === 400 || err.status === 409))
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
  const errorsAt = (field: string) => detailsAbout(problems, field);
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
  const faqs = (Array.isArray(draft.faqs) ? draft.faqs : []) as Faq[];
  const numberText = (field: string) => (typeof draft[field] === "number" ? String(draft[field]) : "");
  const groups = (
    Array.isArray(draft.sponsorshipGroups) ? draft.sponsorshipGroups : []
  ) as SponsorshipGroup[];
  const givingLevels = draft.amountType === "giving_level" || draft.formType === "CROWDFUNDING_FORM";
  const sponsorship = draft.amountType === "sponsorship" || draft.formType === "PRODUCT";

  const save = async () => {
    if (props.readOnly) return;
    setSaving(true);
    setError(null);
    try {
      await call("PUT", path, draft);
      setNotice("Saved: the form's page shows these changes now.");
    } catch (err) {
      if (
        err instanceof ApiFailure &&
        (err.status === 400 || err.status === 409) &&
        Array.isArray(err.body.details)
      )
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
      {props.readOnly && (
        <p class="notice" id="form-read-only">
          Your role may read this form and share it, not change it: ask an Owner or Staff member for changes.
        </p>
      )}
      <fieldset
        class="editor-fields"
        disabled={props.readOnly}
        aria-describedby={props.readOnly ? "form-read-only" : undefined}
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
          <LineList
            props={fieldProps("funds")}
            rows={2}
            value={Array.isArray(draft.funds) ? (draft.funds as string[]) : []}
            onChange={(list) => set("funds", list)}
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
            <FieldErrors id="form-frequencies-error" errors={errorsAt("frequencies")} />
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
        {!event && !sponsorship && (
          <Row problems={problems} field="defaultFrequency" label="Chosen frequency when the form opens">
            <select
              {...fieldProps("defaultFrequency")}
              value={text("defaultFrequency") || frequencies[0]}
              onChange={(e) => set("defaultFrequency", e.currentTarget.value)}
            >
              {[
                ...frequencies,
                ...(text("defaultFrequency") && !frequencies.includes(text("defaultFrequency"))
                  ? [text("defaultFrequency")]
                  : []),
              ].map((f) => (
                <option key={f} value={f}>
                  {FREQUENCY_NAMES[f] ?? f}
                </option>
              ))}
            </select>
          </Row>
        )}
        {!event && !sponsorship && (
          <Row
            problems={problems}
            field="defaultAmount"
            label="Chosen amount when the form opens"
            hint="Empty: the second amount of the list (a giving level's amount picks that level)."
          >
            <input
              {...fieldProps("defaultAmount")}
              type="number"
              min="0"
              step="0.01"
              value={numberText("defaultAmount")}
              onInput={(e) => set("defaultAmount", amountOrNull(e.currentTarget.value))}
            />
          </Row>
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
            <Row problems={problems} field="startTime" label="Starts at">
              <input
                {...fieldProps("startTime")}
                type="time"
                value={text("startTime")}
                onInput={(e) => set("startTime", e.currentTarget.value || null)}
              />
            </Row>
            <Row problems={problems} field="endTime" label="Ends at">
              <input
                {...fieldProps("endTime")}
                type="time"
                value={text("endTime")}
                onInput={(e) => set("endTime", e.currentTarget.value || null)}
              />
            </Row>
            <Row
              problems={problems}
              field="timeZone"
              label="Time zone"
              hint="As America/New_York; empty: none shown."
            >
              <input
                {...fieldProps("timeZone")}
                value={text("timeZone")}
                onInput={(e) => set("timeZone", e.currentTarget.value || null)}
              />
            </Row>
            <Row problems={problems} field="location" label="Place">
              <input
                {...fieldProps("location")}
                value={text("location")}
                onInput={(e) => set("location", e.currentTarget.value)}
              />
            </Row>
            <Row
              problems={problems}
              field="eventDetails"
              label="Event details"
              hint="Shown with the date and place (parking, dress code, what to bring…); at most 5,000 characters."
            >
              <textarea
                {...fieldProps("eventDetails")}
                rows={4}
                maxLength={EVENT_DETAILS_MAX}
                value={text("eventDetails")}
                onInput={(e) => set("eventDetails", e.currentTarget.value)}
              />
            </Row>
            <div>
              <label class="choice">
                <input
                  type="checkbox"
                  checked={flag("enableTimeAndLocation")}
                  onChange={(e) => set("enableTimeAndLocation", e.currentTarget.checked)}
                />{" "}
                Show the date, time and place on the form (a date and a start time are needed)
              </label>
              <FieldErrors id="form-enableTimeAndLocation-error" errors={errorsAt("enableTimeAndLocation")} />
            </div>
            <TicketsEditor
              items={tickets}
              problems={errorsAt("tickets")}
              onChange={(list) => set("tickets", list)}
            />
            <PromoEditor
              items={promoCodes}
              problems={errorsAt("promoCodes")}
              tickets={tickets.map((t) => t.name)}
              onChange={(list) => set("promoCodes", list)}
            />
          </>
        )}
        {givingLevels && (
          <LevelsEditor
            items={levels}
            problems={errorsAt("givingLevels")}
            onChange={(list) => set("givingLevels", list)}
          />
        )}
        {sponsorship && (
          <SponsorshipEditor
            items={groups}
            problems={errorsAt("sponsorshipGroups")}
            onChange={(list) => set("sponsorshipGroups", list)}
          />
        )}
        <QuestionsEditor
          items={questions}
          problems={errorsAt("customInputs")}
          onChange={(list) => set("customInputs", list)}
        />
        <FaqsEditor items={faqs} problems={errorsAt("faqs")} onChange={(list) => set("faqs", list)} />
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
          ["enableDonorList", "Show the list of recent donors"],
          ["enableOrganizationName", "Ask for an organization's name"],
          ["enablePhone", "Ask for a phone number"],
          ["enableBillingAddress", "Ask for the billing address"],
          ["enableCountryDropdown", "Ask for the country"],
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
            <FieldErrors id={`form-${field}-error`} errors={errorsAt(field as string)} />
          </div>
        ))}
        {/* Donation forms only: shown on another kind only while it is (wrongly) on, to turn it off. */}
        {((!event && !sponsorship) || flag("enableMonthlyUpsell")) && (
          <fieldset>
            <legend>Make it monthly</legend>
            <label class="choice">
              <input
                type="checkbox"
                checked={flag("enableMonthlyUpsell")}
                onChange={(e) => set("enableMonthlyUpsell", e.currentTarget.checked)}
              />{" "}
              Suggest a monthly gift instead of a one-time gift (once, before it is sent)
            </label>
            <FieldErrors id="form-enableMonthlyUpsell-error" errors={errorsAt("enableMonthlyUpsell")} />
            {flag("enableMonthlyUpsell") && (
              <>
                <Row
                  problems={problems}
                  field="monthlyUpsellRatio"
                  label="Monthly amount suggested, as a share of the gift"
                  hint="More than 0, at most 1: 0.3 suggests $30 a month for a $100 gift."
                >
                  <input
                    {...fieldProps("monthlyUpsellRatio")}
                    type="number"
                    min="0.01"
                    max="1"
                    step="0.01"
                    value={numberText("monthlyUpsellRatio")}
                    onInput={(e) => set("monthlyUpsellRatio", Number(e.currentTarget.value))}
                  />
                </Row>
                <Row
                  problems={problems}
                  field="monthlyUpsellMinimum"
                  label="Suggested for one-time gifts of at least"
                  hint="Empty: any gift."
                >
                  <input
                    {...fieldProps("monthlyUpsellMinimum")}
                    type="number"
                    min="0"
                    step="0.01"
                    value={numberText("monthlyUpsellMinimum")}
                    onInput={(e) => set("monthlyUpsellMinimum", amountOrNull(e.currentTarget.value))}
                  />
                </Row>
              </>
            )}
          </fieldset>
        )}
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
          <FieldErrors id="form-enableCustomEmail-error" errors={errorsAt("enableCustomEmail")} />
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
      </fieldset>
      <OtherProblems problems={problems.filter((p) => !SHOWN_FIELDS.has(fieldOf(p)))} />
      <ErrorNote message={error} />
      <Notice message={notice} />
      {!props.readOnly && (
        <button type="submit" disabled={saving || problems.length > 0}>
          Save
        </button>
      )}{" "}
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
      <FieldErrors id={`form-${p.field}-error`} errors={detailsAbout(p.problems, p.field)} />
    </div>
  );
}

function FieldErrors(props: { id: string; errors: string[] }) {
  if (props.errors.length === 0) return null;
  return (
    <ul id={props.id} class="error field-errors">
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

const lines = (text: string): string[] => text.split("\n").filter((line) => line.trim() !== "");

/**
 * A list typed one item per line: the text as typed stays in the box (a new, still empty line too), the draft
 * gets its lines that are not empty. A list changed elsewhere (a row removed above it) shows as it is.
 */
function LineList(props: {
  props: Record<string, unknown>;
  rows: number;
  value: string[];
  onChange: (list: string[]) => void;
}) {
  const [text, setText] = useState(props.value.join("\n"));
  const joined = props.value.join("\n");
  useEffect(() => {
    if (lines(text).join("\n") !== joined) setText(joined);
  }, [joined]);
  return (
    <textarea
      {...props.props}
      rows={props.rows}
      value={text}
      onInput={(e) => {
        setText(e.currentTarget.value);
        props.onChange(lines(e.currentTarget.value));
      }}
    />
  );
}

type Control = {
  id: string;
  "aria-invalid"?: true;
  "aria-describedby"?: string;
};

/**
 * A field of a list's item, at `path` (`sponsorshipGroups[0].options[1].amount`): its label, its control, and
 * the draft's problems with it (`path` itself or its own items, `applicableTickets[0]`), shown beside it.
 */
function ItemField(p: {
  path: string;
  label: string;
  problems: string[];
  hint?: string;
  children: (control: Control) => JSX.Element;
}) {
  const errors = p.problems.filter((d) => {
    const at = pathOf(d);
    return at === p.path || at.startsWith(`${p.path}[`);
  });
  const id = idOf(p.path);
  return (
    <div class="item-field">
      <label for={id}>{p.label}</label>
      {p.children({
        id,
        "aria-invalid": errors.length > 0 ? true : undefined,
        "aria-describedby": errors.length > 0 ? `${id}-error` : undefined,
      })}
      {p.hint && <small class="hint">{p.hint}</small>}
      <FieldErrors id={`${id}-error`} errors={errors} />
    </div>
  );
}

/** A list item's limit (how many for sale, per order, uses…): a whole number, empty for none (null). */
function NumberItemField(p: {
  path: string;
  label: string;
  problems: string[];
  value: number | null | undefined;
  onChange: (value: number | null) => void;
}) {
  return (
    <ItemField path={p.path} label={p.label} problems={p.problems}>
      {(c) => (
        <input
          {...c}
          type="number"
          min="1"
          value={limitText(p.value)}
          onInput={(e) => p.onChange(limit(e.currentTarget.value))}
        />
      )}
    </ItemField>
  );
}

/** A list's problems that no item's field shows (a repeated name, a list too short…), under the list. */
function ListErrors(props: { field: string; problems: string[] }) {
  const pattern = ITEM_FIELDS[props.field];
  return (
    <FieldErrors
      id={`form-${props.field}-error`}
      errors={props.problems.filter((d) => !pattern?.test(pathOf(d)))}
    />
  );
}

/** A list editor's list, the draft's problems with it (each shown at its field) and where its changes go. */
type ListProps<T> = { items: T[]; problems: string[]; onChange: (list: T[]) => void };

const money = (value: number | undefined): string => (value === undefined ? "" : String(value));

function TicketsEditor(props: ListProps<Ticket>) {
  const { problems } = props;
  return (
    <ListEditor<Ticket>
      legend="Tickets"
      items={props.items}
      onChange={props.onChange}
      noun="ticket"
      add="Add a ticket type"
      newItem={(n) => ({ name: `Ticket ${n + 1}`, price: 10, ticketType: "INDIVIDUAL" })}
      errors={<ListErrors field="tickets" problems={problems} />}
      row={(ticket, i, change) => (
        <>
          <ItemField path={`tickets[${i}].name`} label={`Ticket ${i + 1} name`} problems={problems}>
            {(c) => (
              <input {...c} value={ticket.name} onInput={(e) => change({ name: e.currentTarget.value })} />
            )}
          </ItemField>
          <ItemField path={`tickets[${i}].price`} label={`Ticket ${i + 1} price`} problems={problems}>
            {(c) => (
              <input
                {...c}
                type="number"
                min="0"
                step="0.01"
                value={money(ticket.price)}
                onInput={(e) => change({ price: Number(e.currentTarget.value) })}
              />
            )}
          </ItemField>
          <ItemField path={`tickets[${i}].groupSize`} label={`Ticket ${i + 1} admits`} problems={problems}>
            {(c) => (
              <input
                {...c}
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
            )}
          </ItemField>
          <NumberItemField
            path={`tickets[${i}].quantity`}
            label={`Ticket ${i + 1} how many for sale (empty: no limit)`}
            problems={problems}
            value={ticket.quantity}
            onChange={(quantity) => change({ quantity })}
          />
          <NumberItemField
            path={`tickets[${i}].maxPerOrder`}
            label={`Ticket ${i + 1} most per order (empty: no limit)`}
            problems={problems}
            value={ticket.maxPerOrder}
            onChange={(maxPerOrder) => change({ maxPerOrder })}
          />
          <ItemField
            path={`tickets[${i}].fairMarketValue`}
            label={`Ticket ${i + 1} fair-market value (not deductible; empty: not stated)`}
            problems={problems}
          >
            {(c) => (
              <input
                {...c}
                type="number"
                min="0"
                step="0.01"
                value={limitText(ticket.fairMarketValue)}
                onInput={(e) => change({ fairMarketValue: amountOrNull(e.currentTarget.value) })}
              />
            )}
          </ItemField>
          <ItemField
            path={`tickets[${i}].description`}
            label={`Ticket ${i + 1} description`}
            problems={problems}
          >
            {(c) => (
              <input
                {...c}
                value={ticket.description ?? ""}
                onInput={(e) => change({ description: e.currentTarget.value })}
              />
            )}
          </ItemField>
        </>
      )}
    />
  );
}

function PromoEditor(props: ListProps<PromoCode> & { tickets: string[] }) {
  const { problems } = props;
  return (
    <ListEditor<PromoCode>
      legend="Promo codes"
      items={props.items}
      onChange={props.onChange}
      noun="code"
      add="Add a promo code"
      newItem={(n) => ({ code: `CODE${n + 1}`, discountType: "percentage", discountValue: 10 })}
      errors={<ListErrors field="promoCodes" problems={problems} />}
      row={(code, i, change) => {
        const only = code.applicableTickets ?? [];
        // The form's tickets, and any the code still names that the form no longer has (to untick them).
        const names = [...props.tickets, ...only.filter((n) => !props.tickets.includes(n))];
        const path = `promoCodes[${i}].applicableTickets`;
        const errors = problems.filter((d) => pathOf(d) === path || pathOf(d).startsWith(`${path}[`));
        return (
          <>
            <ItemField path={`promoCodes[${i}].code`} label={`Code ${i + 1}`} problems={problems}>
              {(c) => (
                <input {...c} value={code.code} onInput={(e) => change({ code: e.currentTarget.value })} />
              )}
            </ItemField>
            <ItemField
              path={`promoCodes[${i}].discountType`}
              label={`Code ${i + 1} discount`}
              problems={problems}
            >
              {(c) => (
                <select
                  {...c}
                  value={code.discountType}
                  onChange={(e) =>
                    change({ discountType: e.currentTarget.value as PromoCode["discountType"] })
                  }
                >
                  <option value="percentage">Percent off</option>
                  <option value="amount">Amount off</option>
                </select>
              )}
            </ItemField>
            <ItemField
              path={`promoCodes[${i}].discountValue`}
              label={`Code ${i + 1} value`}
              problems={problems}
            >
              {(c) => (
                <input
                  {...c}
                  type="number"
                  min="0"
                  step="0.01"
                  value={money(code.discountValue)}
                  onInput={(e) => change({ discountValue: Number(e.currentTarget.value) })}
                />
              )}
            </ItemField>
            <NumberItemField
              path={`promoCodes[${i}].quantity`}
              label={`Code ${i + 1} how many uses (empty: no limit)`}
              problems={problems}
              value={code.quantity}
              onChange={(quantity) => change({ quantity })}
            />
            <fieldset
              class="item-tickets"
              aria-invalid={errors.length > 0 ? true : undefined}
              aria-describedby={errors.length > 0 ? `${idOf(path)}-error` : undefined}
            >
              <legend>Code {i + 1} is for (none ticked: every ticket)</legend>
              {names.map((name) => (
                <label key={name} class="choice">
                  <input
                    type="checkbox"
                    checked={only.includes(name)}
                    onChange={(e) =>
                      change({
                        applicableTickets: e.currentTarget.checked
                          ? names.filter((n) => n === name || only.includes(n))
                          : only.filter((n) => n !== name),
                      })
                    }
                  />{" "}
                  {name}
                </label>
              ))}
              <FieldErrors id={`${idOf(path)}-error`} errors={errors} />
            </fieldset>
          </>
        );
      }}
    />
  );
}

function LevelsEditor(props: ListProps<GivingLevel>) {
  const { problems } = props;
  return (
    <ListEditor<GivingLevel>
      legend="Giving levels"
      items={props.items}
      onChange={props.onChange}
      noun="level"
      add="Add a giving level"
      newItem={(n) => ({ title: `Level ${n + 1}`, amount: 50, description: "" })}
      errors={<ListErrors field="givingLevels" problems={problems} />}
      row={(level, i, change) => (
        <>
          <ItemField path={`givingLevels[${i}].title`} label={`Level ${i + 1} name`} problems={problems}>
            {(c) => (
              <input {...c} value={level.title} onInput={(e) => change({ title: e.currentTarget.value })} />
            )}
          </ItemField>
          <ItemField path={`givingLevels[${i}].amount`} label={`Level ${i + 1} amount`} problems={problems}>
            {(c) => (
              <input
                {...c}
                type="number"
                min="0"
                step="0.01"
                value={money(level.amount)}
                onInput={(e) => change({ amount: Number(e.currentTarget.value) })}
              />
            )}
          </ItemField>
          <ItemField
            path={`givingLevels[${i}].description`}
            label={`Level ${i + 1} description`}
            problems={problems}
          >
            {(c) => (
              <input
                {...c}
                value={level.description ?? ""}
                onInput={(e) => change({ description: e.currentTarget.value })}
              />
            )}
          </ItemField>
        </>
      )}
    />
  );
}

/**
 * Sponsorship packages: groups (a title and a description) of packages, each with its name, amount,
 * description and how many there are. With one group its packages are "Package 1…", with more "Group 2
 * package 1…".
 */
function SponsorshipEditor(props: ListProps<SponsorshipGroup>) {
  const { problems } = props;
  const several = props.items.length > 1;
  return (
    <ListEditor<SponsorshipGroup>
      legend="Sponsorship packages"
      items={props.items}
      onChange={props.onChange}
      noun="group"
      add="Add a group of packages"
      newItem={(n) => ({
        groupTitle: `Group ${n + 1}`,
        description: "",
        options: [{ optionTitle: "Package 1", amount: 100, description: "", quantity: null }],
      })}
      errors={<ListErrors field="sponsorshipGroups" problems={problems} />}
      row={(group, g, changeGroup) => {
        const base = `sponsorshipGroups[${g}]`;
        const pkg = (j: number) => (several ? `Group ${g + 1} package ${j + 1}` : `Package ${j + 1}`);
        const optionErrors = problems.filter((d) => pathOf(d) === `${base}.options`);
        return (
          <>
            <ItemField path={`${base}.groupTitle`} label={`Group ${g + 1} name`} problems={problems}>
              {(c) => (
                <input
                  {...c}
                  value={group.groupTitle}
                  onInput={(e) => changeGroup({ groupTitle: e.currentTarget.value })}
                />
              )}
            </ItemField>
            <ItemField path={`${base}.description`} label={`Group ${g + 1} description`} problems={problems}>
              {(c) => (
                <input
                  {...c}
                  value={group.description ?? ""}
                  onInput={(e) => changeGroup({ description: e.currentTarget.value })}
                />
              )}
            </ItemField>
            <div class="item-list">
              <ListEditor<SponsorshipOption>
                legend={`Group ${g + 1} packages`}
                items={Array.isArray(group.options) ? group.options : []}
                onChange={(options) => changeGroup({ options })}
                noun={several ? `group ${g + 1} package` : "package"}
                add={several ? `Add a package to group ${g + 1}` : "Add a package"}
                newItem={(n) => ({
                  optionTitle: `Package ${n + 1}`,
                  amount: 100,
                  description: "",
                  quantity: null,
                })}
                errors={<FieldErrors id={`${idOf(`${base}.options`)}-error`} errors={optionErrors} />}
                row={(option, j, change) => {
                  const at = `${base}.options[${j}]`;
                  return (
                    <>
                      <ItemField path={`${at}.optionTitle`} label={`${pkg(j)} name`} problems={problems}>
                        {(c) => (
                          <input
                            {...c}
                            value={option.optionTitle}
                            onInput={(e) => change({ optionTitle: e.currentTarget.value })}
                          />
                        )}
                      </ItemField>
                      <ItemField path={`${at}.amount`} label={`${pkg(j)} amount`} problems={problems}>
                        {(c) => (
                          <input
                            {...c}
                            type="number"
                            min="0"
                            step="0.01"
                            value={money(option.amount)}
                            onInput={(e) => change({ amount: Number(e.currentTarget.value) })}
                          />
                        )}
                      </ItemField>
                      <NumberItemField
                        path={`${at}.quantity`}
                        label={`${pkg(j)} how many (empty: no limit)`}
                        problems={problems}
                        value={option.quantity}
                        onChange={(quantity) => change({ quantity })}
                      />
                      <ItemField
                        path={`${at}.description`}
                        label={`${pkg(j)} description`}
                        problems={problems}
                      >
                        {(c) => (
                          <input
                            {...c}
                            value={option.description ?? ""}
                            onInput={(e) => change({ description: e.currentTarget.value })}
                          />
                        )}
                      </ItemField>
                    </>
                  );
                }}
              />
            </div>
          </>
        );
      }}
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
  const { problems } = props;
  return (
    <ListEditor<Question>
      legend="Questions for donors"
      items={props.items}
      onChange={props.onChange}
      noun="question"
      // Keyed by place, not by id: the id is edited here, and a key that changed as it is typed would
      // rebuild the row and take the focus away from the field.
      add="Add a question"
      newItem={(n) => ({ title: `Question ${n + 1}`, inputType: "short_text", required: false })}
      errors={<ListErrors field="customInputs" problems={problems} />}
      row={(q, i, change) => (
        <>
          <ItemField path={`customInputs[${i}].title`} label={`Question ${i + 1}`} problems={problems}>
            {(c) => (
              <input {...c} value={q.title ?? ""} onInput={(e) => change({ title: e.currentTarget.value })} />
            )}
          </ItemField>
          <ItemField
            path={`customInputs[${i}].id`}
            label={`Question ${i + 1} id`}
            problems={problems}
            hint={`Letters, digits, '-' and '_', at most ${QUESTION_ID_MAX}; empty: one is made when saved. Exports and webhooks name the answers by it (answers already given keep the id they had).`}
          >
            {(c) => (
              <input
                {...c}
                maxLength={QUESTION_ID_MAX}
                spellcheck={false}
                autoComplete="off"
                value={q.id ?? ""}
                onInput={(e) =>
                  change({ id: e.currentTarget.value === "" ? undefined : e.currentTarget.value })
                }
              />
            )}
          </ItemField>
          <ItemField
            path={`customInputs[${i}].inputType`}
            label={`Question ${i + 1} answer`}
            problems={problems}
          >
            {(c) => (
              <select
                {...c}
                value={q.inputType}
                onChange={(e) => change({ inputType: e.currentTarget.value as Question["inputType"] })}
              >
                {QUESTION_TYPES.map(([value, label]) => (
                  <option key={value} value={value}>
                    {label}
                  </option>
                ))}
              </select>
            )}
          </ItemField>
          {(q.inputType === "single_select" ||
            q.inputType === "multi_select" ||
            (q.options ?? []).length > 0) && (
            <ItemField
              path={`customInputs[${i}].options`}
              label={`Question ${i + 1} choices (one per line)`}
              problems={problems}
            >
              {(c) => (
                <LineList
                  props={c}
                  rows={3}
                  value={q.options ?? []}
                  onChange={(options) => change({ options })}
                />
              )}
            </ItemField>
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

/** The form's frequently asked questions, each a question and its answer, shown under the checkout. */
function FaqsEditor(props: ListProps<Faq>) {
  const { problems } = props;
  return (
    <ListEditor<Faq>
      legend="Frequently asked questions"
      items={props.items}
      onChange={props.onChange}
      noun="FAQ"
      add="Add a question and its answer"
      newItem={(n) => ({ question: `Question ${n + 1}?`, answer: "The answer." })}
      errors={<ListErrors field="faqs" problems={problems} />}
      row={(faq, i, change) => (
        <>
          <ItemField path={`faqs[${i}].question`} label={`FAQ ${i + 1} question`} problems={problems}>
            {(c) => (
              <input
                {...c}
                value={faq.question}
                onInput={(e) => change({ question: e.currentTarget.value })}
              />
            )}
          </ItemField>
          <ItemField path={`faqs[${i}].answer`} label={`FAQ ${i + 1} answer`} problems={problems}>
            {(c) => (
              <textarea
                {...c}
                rows={3}
                value={faq.answer}
                onInput={(e) => change({ answer: e.currentTarget.value })}
              />
            )}
          </ItemField>
        </>
      )}
    />
  );
}

/** Everything the API takes, as JSON: for what the fields above do not show. */
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

/**
 * The checkout inside the editor's page is a picture of it, not a part of the page: its title is a heading
 * under "Preview" (an h3, not a second h1), and its form, without the name that made it one, is no landmark
 * of the page's own. Both are changed as Preact creates the elements (a vnode hook of this chunk's, matching
 * only the checkout's `#alm-title` and the form it names), so the checkout's own bundle carries nothing for it.
 */
const previousVnodeHook = options.vnode;
options.vnode = (vnode) => {
  const props = vnode.props as Record<string, unknown>;
  if (vnode.type === "h1" && props.id === "alm-title") vnode.type = "h3";
  if (vnode.type === "form" && props["aria-labelledby"] === "alm-title") delete props["aria-labelledby"];
  previousVnodeHook?.(vnode);
};
