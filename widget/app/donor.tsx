import { useEffect, useRef } from "preact/hooks";
import { COUNTRY_CODES } from "../../shared/countries.js";
import { decimalsOf } from "../../shared/currency.js";
import { coverFeeCents } from "../../shared/pricing/fees.js";
import { ErrorText, errorProps, fieldId, Group, Radio, Req, TextInput } from "./fields.js";
import { loadLater } from "./later.js";
import { pageLanguage, t } from "./locale.js";
import type { Checkout } from "./store.js";
import { type CustomInput, money } from "./view.js";

/** Who gives and how: custom questions, cover-fees and anonymous choices, donor details, payment. */

function CustomField({ c, input, index }: { c: Checkout; input: CustomInput; index: number }) {
  const name = `ci-${input.id}`;
  const id = fieldId(`ci-${index}`);
  const value = c.answers.value[input.id];
  const set = (v: string | string[]) => {
    c.setAnswer(input.id, v);
    c.clearError(name);
  };
  const aria = errorProps(c, name);
  if (input.inputType === "multi_select") {
    const chosen = Array.isArray(value) ? value : [];
    return (
      <Group c={c} name={name} legend={input.title} required={input.required}>
        {input.options.map((o, i) => {
          const oid = `${id}-${i}`;
          return (
            <div key={o} class="alm-choice alm-check">
              <input
                type="checkbox"
                id={oid}
                checked={chosen.includes(o)}
                onChange={(e) =>
                  set(e.currentTarget.checked ? [...chosen, o] : chosen.filter((x) => x !== o))
                }
              />
              <label for={oid}>{o}</label>
            </div>
          );
        })}
      </Group>
    );
  }
  const text = typeof value === "string" ? value : "";
  const label = (
    <label for={id}>
      {input.title}
      <Req on={input.required} />
    </label>
  );
  let control: preact.JSX.Element;
  if (input.inputType === "single_select")
    control = (
      <select
        id={id}
        required={input.required}
        value={text}
        onChange={(e) => set(e.currentTarget.value)}
        {...aria}
      >
        <option value="">{t("checkout.choose")}</option>
        {input.options.map((o) => (
          <option key={o} value={o}>
            {o}
          </option>
        ))}
      </select>
    );
  else if (input.inputType === "long_text")
    control = (
      <textarea
        id={id}
        rows={3}
        required={input.required}
        value={text}
        maxLength={2000}
        onInput={(e) => set(e.currentTarget.value)}
        {...aria}
      />
    );
  else
    control = (
      <input
        id={id}
        type="text"
        required={input.required}
        value={text}
        maxLength={2000}
        onInput={(e) => set(e.currentTarget.value)}
        {...aria}
      />
    );
  return (
    <div class="alm-field">
      {label}
      {control}
      <ErrorText c={c} name={name} />
    </div>
  );
}

export function CustomInputs({ c }: { c: Checkout }) {
  if (c.view.customInputs.length === 0) return null;
  return (
    <section class="alm-section" aria-labelledby="alm-h-questions">
      <h2 id="alm-h-questions">{t("checkout.questions")}</h2>
      {c.view.customInputs.map((input, i) => (
        <CustomField key={input.id} c={c} input={input} index={i} />
      ))}
    </section>
  );
}

function Check(props: {
  id: string;
  checked: boolean;
  onChange: (v: boolean) => void;
  children: preact.ComponentChildren;
}) {
  return (
    <div class="alm-choice alm-check">
      <input
        type="checkbox"
        id={props.id}
        checked={props.checked}
        onChange={(e) => props.onChange(e.currentTarget.checked)}
      />
      <label for={props.id}>{props.children}</label>
    </div>
  );
}

export function Choices({ c }: { c: Checkout }) {
  const { coverFees, anonymous } = c.view.options;
  const base =
    c.quoteFresh.value && c.quote.value
      ? c.quote.value.subtotal - c.quote.value.discount
      : (c.total.value ?? 0);
  const rate = c.view.feeRate;
  // No fee is named for an amount no checkout takes (a card number pasted in the amount): the server refuses it.
  const cents =
    base > 0 && base < 1e9
      ? coverFeeCents(Math.round(base * 100), {
          percentBps: Math.round(rate.percent * 100),
          fixedCents: Math.round(rate.fixed * 100),
        })
      : 0;
  // Whole units in a currency without decimals, rounded up as the server charges it (¥45.4 is ¥46, not ¥45).
  const fee = decimalsOf(c.view.currency) ? cents / 100 : Math.ceil(cents / 100);
  if (!coverFees && !anonymous) return null;
  return (
    <div class="alm-options">
      {coverFees && (
        <Check
          id={fieldId("coverFees")}
          checked={c.coverFees.value}
          onChange={(v) => (c.coverFees.value = v)}
        >
          {t("checkout.coverFees", {
            fee: fee > 0 ? money(fee) : t("checkout.coverFees.fee"),
            kind: c.kind,
            organization: c.view.organization.name,
          })}
        </Check>
      )}
      {anonymous && (
        <Check
          id={fieldId("anonymous")}
          checked={c.anonymous.value}
          onChange={(v) => (c.anonymous.value = v)}
        >
          {t("checkout.anonymous", { kind: c.kind })}
        </Check>
      )}
    </div>
  );
}

/** A dedication, where the form takes one: in honor or in memory of someone, who may be told by e-mail. */
export function Dedication({ c }: { c: Checkout }) {
  if (!c.view.options.tribute || c.kind === "EVENT") return null;
  const kinds = [
    ["HONOR", t("checkout.honor")],
    ["MEMORY", t("checkout.memory")],
  ] as const;
  return (
    <div class="alm-options">
      <Check id={fieldId("dedicate")} checked={c.dedicate.value} onChange={(v) => (c.dedicate.value = v)}>
        {t("checkout.dedicate")}
      </Check>
      {c.dedicate.value && (
        <Group c={c} name="tributeKind" legend={t("checkout.dedication")}>
          {kinds.map(([value, label], i) => (
            <Radio
              key={value}
              name="tributeKind"
              value={value}
              index={i}
              checked={c.tributeKind.value === value}
              onSelect={() => (c.tributeKind.value = value)}
            >
              {label}
            </Radio>
          ))}
          <TextInput c={c} name="honoreeName" label={t("checkout.honoreeName")} required maxLength={200} />
          <TextInput
            c={c}
            name="tributeEmail"
            type="email"
            inputMode="email"
            label={t("checkout.tributeEmail")}
            hint={t("checkout.tributeEmail.hint")}
            maxLength={254}
          />
          <TextInput c={c} name="tributeMessage" label={t("checkout.tributeMessage")} maxLength={1000} />
        </Group>
      )}
    </div>
  );
}

const countries = new Map<string, [string, string][]>();
/** The select's countries (shared/countries.ts) named by the browser's (or Node's) Intl data, sorted by name. */
function countryList(): [string, string][] {
  const cached = countries.get(pageLanguage());
  if (cached) return cached;
  const names = new Intl.DisplayNames([pageLanguage()], { type: "region" });
  const list = COUNTRY_CODES.map((code) => [code, names.of(code) ?? code] as [string, string]).sort((a, b) =>
    a[1].localeCompare(b[1], pageLanguage()),
  );
  countries.set(pageLanguage(), list);
  return list;
}

function CountrySelect({ c }: { c: Checkout }) {
  const id = fieldId("country");
  const all = countryList();
  // A prefilled country arrives as one of these codes (the server resolves names): anything else shows,
  // and is sent, as no choice.
  const chosen = c.text.country.value;
  const value = COUNTRY_CODES.includes(chosen) ? chosen : "";
  // Country names come from the runtime's Intl data, which may differ between Node and the browser; since
  // hydration keeps the server's <option> values, the server sends only the chosen one and the browser
  // lists them all once it has taken over.
  const list = c.ready.value ? all : all.filter(([code]) => code === value);
  return (
    <div class="alm-field">
      <label for={id}>{t("checkout.country")}</label>
      <select
        id={id}
        autoComplete="country"
        value={value}
        onChange={(e) => (c.text.country.value = e.currentTarget.value)}
      >
        <option value="">{t("checkout.choose")}</option>
        {list.map(([code, name]) => (
          <option key={code} value={code}>
            {name}
          </option>
        ))}
      </select>
    </div>
  );
}

export function DonorDetails({ c }: { c: Checkout }) {
  const o = c.view.options;
  return (
    <section class="alm-section" aria-labelledby="alm-h-donor">
      <h2 id="alm-h-donor">{t("checkout.details")}</h2>
      <p class="alm-hint">
        {t("checkout.required.before")} <span aria-hidden="true">*</span>
        <span class="alm-sr"> {t("checkout.required.sr")}</span> {t("checkout.required.after")}
      </p>
      <div class="alm-row">
        <TextInput
          c={c}
          name="firstName"
          label={t("checkout.firstName")}
          required
          autoComplete="given-name"
          maxLength={100}
        />
        <TextInput
          c={c}
          name="lastName"
          label={t("checkout.lastName")}
          required
          autoComplete="family-name"
          maxLength={100}
        />
      </div>
      <TextInput
        c={c}
        name="email"
        label={t("checkout.email")}
        type="email"
        required
        autoComplete="email"
        inputMode="email"
        maxLength={254}
      />
      <Check
        id={fieldId("emailOptIn")}
        checked={c.emailOptIn.value}
        onChange={(v) => (c.emailOptIn.value = v)}
      >
        {t("checkout.emailOptIn", { organization: c.view.organization.name })}
      </Check>
      {o.phone && (
        <TextInput
          c={c}
          name="phone"
          label={t("checkout.phone")}
          type="tel"
          autoComplete="tel"
          inputMode="tel"
          maxLength={40}
        />
      )}
      {o.organizationName && (
        <TextInput
          c={c}
          name="organizationName"
          label={t("checkout.organizationName")}
          autoComplete="organization"
          maxLength={200}
        />
      )}
      {o.billingAddress && (
        <>
          <TextInput
            c={c}
            name="line1"
            label={t("checkout.line1")}
            autoComplete="address-line1"
            maxLength={200}
          />
          <TextInput
            c={c}
            name="line2"
            label={t("checkout.line2")}
            autoComplete="address-line2"
            maxLength={200}
          />
          <div class="alm-row">
            <TextInput
              c={c}
              name="city"
              label={t("checkout.city")}
              autoComplete="address-level2"
              maxLength={100}
            />
            <TextInput
              c={c}
              name="region"
              label={t("checkout.region")}
              autoComplete="address-level1"
              maxLength={100}
            />
            <TextInput
              c={c}
              name="postal"
              label={t("checkout.postal")}
              autoComplete="postal-code"
              maxLength={20}
            />
          </div>
        </>
      )}
      {(o.country || o.billingAddress) && <CountrySelect c={c} />}
      {/* Honeypot: people never see or reach it; form-filling bots do. */}
      <div class="alm-hp" aria-hidden="true">
        <label for={fieldId("website")}>Website</label>
        <input
          id={fieldId("website")}
          name="website"
          tabIndex={-1}
          autoComplete="off"
          value={c.text.website.value}
          onInput={(e) => (c.text.website.value = e.currentTarget.value)}
        />
      </div>
    </section>
  );
}

export function Payment({ c }: { c: Checkout }) {
  const payment = c.view.payment;
  if (c.total.value === 0 || !payment) return null;
  if (payment.processor === "stripe") return <StripePayment c={c} />;
  const sandbox = true;
  const methods = payment.methods;
  return (
    <section class="alm-section" aria-labelledby="alm-h-pay">
      <h2 id="alm-h-pay">{t("checkout.payment")}</h2>
      {methods.length > 1 && (
        <Group c={c} name="method" legend={t("checkout.payWith")} class="alm-tabs">
          {methods.map((m, i) => (
            <Radio
              key={m}
              name="method"
              index={i}
              value={m}
              checked={c.method.value === m}
              onSelect={() => (c.method.value = m)}
            >
              {m === "card" ? t("checkout.method.card") : t("checkout.method.bank")}
            </Radio>
          ))}
        </Group>
      )}
      {sandbox && (
        <p class="alm-note" id="alm-sandbox">
          {t("checkout.testMode")}{" "}
          {c.method.value === "card" ? t("checkout.testMode.card") : t("checkout.testMode.bank")}
        </p>
      )}
      {c.method.value === "card" ? (
        <div class="alm-row">
          <TextInput
            c={c}
            name="cardNumber"
            label={t("checkout.cardNumber")}
            required
            autoComplete="cc-number"
            inputMode="numeric"
            class="alm-wide"
            maxLength={23}
          />
          <TextInput
            c={c}
            name="cardExp"
            label={t("checkout.cardExp")}
            required
            autoComplete="cc-exp"
            inputMode="numeric"
            maxLength={9}
          />
          <TextInput
            c={c}
            name="cardCvc"
            label={t("checkout.cardCvc")}
            required
            autoComplete="cc-csc"
            inputMode="numeric"
            maxLength={4}
          />
        </div>
      ) : (
        <>
          <TextInput
            c={c}
            name="accountHolder"
            label={t("checkout.accountHolder")}
            required
            autoComplete="name"
            maxLength={200}
          />
          <div class="alm-row">
            <TextInput
              c={c}
              name="routingNumber"
              label={t("checkout.routingNumber")}
              required
              inputMode="numeric"
              maxLength={11}
            />
            <TextInput
              c={c}
              name="accountNumber"
              label={t("checkout.accountNumber")}
              required
              inputMode="numeric"
              maxLength={19}
            />
          </div>
        </>
      )}
    </section>
  );
}

/** Stripe's own fields (the Payment Element and, above it, the wallet buttons) mount here (paymentFields.ts). */
function StripePayment({ c }: { c: Checkout }) {
  const express = useRef<HTMLDivElement>(null);
  const fields = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const [wallets, payment] = [express.current, fields.current];
    if (!wallets || !payment) return;
    // The bridge to Stripe's module is in the second chunk (later.ts), loaded at once for these forms.
    let detach: (() => void) | undefined;
    let gone = false;
    loadLater().then(
      (parts) => {
        if (!gone) detach = parts.attachPaymentFields(c, { express: wallets, payment });
      },
      () => {
        c.errors.value = { ...c.errors.value, payment: t("checkout.error.fieldsFailed") };
      },
    );
    return () => {
      gone = true;
      detach?.();
    };
  }, [c]);
  return (
    <section class="alm-section" aria-labelledby="alm-h-pay">
      <h2 id="alm-h-pay">{t("checkout.payment")}</h2>
      <div id="alm-stripe-express" ref={express} />
      <div id="alm-stripe-payment" ref={fields} />
      <ErrorText c={c} name="payment" />
    </section>
  );
}
