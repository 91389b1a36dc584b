import type { MessageKey } from "../../shared/i18n/catalogs/en.js";
import {
  AmountPicker,
  ExtraDonation,
  FrequencyPicker,
  FundPicker,
  LevelPicker,
  ProductPicker,
  PromoCode,
  TicketPicker,
} from "./choices.js";
import { Choices, CustomInputs, Dedication, DonorDetails, Payment } from "./donor.js";
import { later, loadLater } from "./later.js";
import { pageLanguage, t } from "./locale.js";
import type { Checkout } from "./store.js";
import { adverbOf, clock, longDate, money, perPeriod, zoneName } from "./view.js";

/**
 * The checkout as one tree, rendered to HTML on the server (hosted page) and hydrated in the browser.
 * It reads nothing of the browser while rendering, so both renders agree.
 */

export interface AppProps {
  c: Checkout;
  /** Inside an iframe (embed or overlay): no page chrome. */
  embedded?: boolean;
}

function FundraisingBar({ c }: { c: Checkout }) {
  const bar = c.view.fundraisingBar;
  if (!bar) return null;
  const pct = bar.goal > 0 ? Math.min(100, Math.round((bar.raised / bar.goal) * 100)) : 0;
  return (
    <section class="alm-bar" aria-labelledby="alm-h-bar">
      <h2 id="alm-h-bar" class="alm-sr">
        {t("checkout.bar.heading")}
      </h2>
      <progress
        max={100}
        value={pct}
        aria-label={t("checkout.bar.label", { percent: pct, goal: money(bar.goal) })}
      />
      <p>
        {t("checkout.bar.raised", { raised: money(bar.raised), goal: money(bar.goal), donors: bar.donors })}
      </p>
    </section>
  );
}

function EventDetails({ c }: { c: Checkout }) {
  const e = c.view.event;
  if (!e) return null;
  return (
    <section class="alm-event" aria-labelledby="alm-h-event">
      <h2 id="alm-h-event">{t("checkout.event.heading")}</h2>
      <dl>
        {e.date && (
          <>
            <dt>{t("checkout.event.date")}</dt>
            <dd>{longDate(e.date, pageLanguage())}</dd>
          </>
        )}
        {e.startTime && (
          <>
            <dt>{t("checkout.event.time")}</dt>
            <dd>
              {clock(e.startTime, pageLanguage())}
              {e.endTime ? ` – ${clock(e.endTime, pageLanguage())}` : ""}
              {e.timeZone ? ` (${zoneName(e.timeZone, pageLanguage())})` : ""}
            </dd>
          </>
        )}
        {e.location && (
          <>
            <dt>{t("checkout.event.location")}</dt>
            <dd>{e.location}</dd>
          </>
        )}
      </dl>
      {e.details && <p class="alm-desc">{e.details}</p>}
    </section>
  );
}

function Summary({ c }: { c: Checkout }) {
  const q = c.quoteFresh.value ? c.quote.value : null;
  const per = perPeriod(c.frequency.value);
  return (
    <section class="alm-summary" aria-labelledby="alm-h-summary">
      <h2 id="alm-h-summary">{t("checkout.summary.heading")}</h2>
      {q ? (
        <dl>
          {q.lines.map((l) => (
            <div key={l.label} class="alm-line">
              <dt>
                {
                  // A line pricing labelled itself is said by its message (shared/i18n/lineLabel.ts); any
                  // other label has none, so t() answers its key, which is the label once the prefix is cut.
                  t(`checkout.line.${l.label}` as MessageKey).replace("checkout.line.", "")
                }
                {l.quantity > 1 ? ` × ${l.quantity}` : ""}
              </dt>
              <dd>{money(l.amount)}</dd>
            </div>
          ))}
          {q.discount > 0 && (
            <div class="alm-line">
              <dt>{t("checkout.summary.promo", { code: q.promoCode ?? "" })}</dt>
              <dd>−{money(q.discount)}</dd>
            </div>
          )}
          {q.fee > 0 && (
            <div class="alm-line">
              <dt>{t("checkout.summary.fee")}</dt>
              <dd>{money(q.fee)}</dd>
            </div>
          )}
          <div class="alm-line alm-total">
            <dt>{t("checkout.summary.total")}</dt>
            <dd>
              {money(q.total)}
              {per}
            </dd>
          </div>
        </dl>
      ) : (
        <p class="alm-hint">
          {c.quoteError.value
            ? ""
            : c.order.value
              ? t("checkout.summary.calculating")
              : t("checkout.summary.choose")}
        </p>
      )}
      <p class="alm-err" aria-live="polite">
        {c.quoteError.value ?? ""}
      </p>
    </section>
  );
}

/** "Donate $25 monthly", "Sponsor for $1,000", "Pay $150", "Register". */
export function buttonLabel(c: Checkout): string {
  const total = c.total.value;
  if (c.status.value === "submitting") return t("checkout.button.processing");
  if (c.kind === "EVENT")
    return total ? t("checkout.button.pay", { amount: money(total) }) : t("checkout.button.register");
  if (total === null)
    return c.kind === "PRODUCT" ? t("checkout.button.sponsor") : t("checkout.button.donate");
  if (c.kind === "PRODUCT") return t("checkout.button.sponsorFor", { amount: money(total) });
  const adverb = adverbOf(c.frequency.value);
  return adverb
    ? t("checkout.button.donateRecurring", { amount: money(total), adverb })
    : t("checkout.button.donateAmount", { amount: money(total) });
}

function CheckoutForm({ c }: { c: Checkout }) {
  const kind = c.kind;
  const parts = later.value;
  return (
    <form
      class="alm-form"
      noValidate
      // After Back, the browser puts back only fields with an autocomplete token of their own (names, e-mail,
      // card; hydrate.tsx replays them): choices whose lists depend on other choices (amounts on the
      // frequency) would come back in the wrong places, so they start again from what the page shows.
      autoComplete="off"
      aria-labelledby="alm-title"
      onSubmit={async (e) => {
        e.preventDefault();
        const form = e.currentTarget;
        // Sending is in the second chunk (later.ts): without it nothing is sent.
        const loaded = await loadLater().catch(() => null);
        if (loaded) await loaded.submit(c);
        else c.formError.value = t("checkout.error.network");
        // Take the donor to the first field that needs attention.
        const first = form.querySelector<HTMLElement>('[aria-invalid="true"]');
        if (c.status.value === "form") (first ?? form.querySelector<HTMLElement>(".alm-alert"))?.focus();
      }}
    >
      <section class="alm-section" aria-labelledby="alm-h-choice">
        <h2 id="alm-h-choice">{t("checkout.choice.heading", { kind })}</h2>
        {kind !== "EVENT" && kind !== "PRODUCT" && <FrequencyPicker c={c} />}
        {kind === "EMBED_FORM" && <AmountPicker c={c} />}
        {kind === "CROWDFUNDING_FORM" && <LevelPicker c={c} />}
        {kind === "PRODUCT" && <ProductPicker c={c} />}
        {kind === "EVENT" && (
          <>
            <TicketPicker c={c} />
            <PromoCode c={c} />
            <ExtraDonation c={c} />
          </>
        )}
        <FundPicker c={c} />
        <Choices c={c} />
        <Dedication c={c} />
      </section>
      <CustomInputs c={c} />
      <DonorDetails c={c} />
      <Payment c={c} />
      <Summary c={c} />
      <div class="alm-alert" role="alert" tabIndex={-1}>
        {c.formError.value ?? ""}
      </div>
      {c.upsell.value && parts ? (
        <parts.UpsellOffer c={c} />
      ) : (
        // While sending, the button keeps the focus (aria-disabled, not disabled, which would drop it on the
        // page) and says "Processing…" aloud; a second press sends nothing (send() holds it).
        <button
          type="submit"
          class="alm-submit"
          disabled={!c.ready.value}
          aria-disabled={c.status.value === "submitting" || undefined}
          aria-live="polite"
        >
          {buttonLabel(c)}
        </button>
      )}
    </form>
  );
}

function Faqs({ c }: { c: Checkout }) {
  if (c.view.faqs.length === 0) return null;
  return (
    <section class="alm-faqs" aria-labelledby="alm-h-faq">
      <h2 id="alm-h-faq">{t("checkout.faq.heading")}</h2>
      {c.view.faqs.map((f) => (
        <details key={f.question}>
          <summary>{f.question}</summary>
          <p>{f.answer}</p>
        </details>
      ))}
    </section>
  );
}

function DonorList({ c }: { c: Checkout }) {
  const list = c.view.donorList;
  if (!list) return null;
  return (
    <section class="alm-donors" aria-labelledby="alm-h-donors">
      <h2 id="alm-h-donors">{t("checkout.donors.heading")}</h2>
      {list.length === 0 ? (
        <p class="alm-hint">{t("checkout.donors.first")}</p>
      ) : (
        <ul>
          {list.map((d, i) => (
            <li key={`${d.date}-${i}`}>
              <span class={d.anonymous ? "alm-anon" : undefined}>{d.name}</span>{" "}
              <span>{money(d.amount)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

export function App({ c, embedded }: AppProps) {
  const v = c.view;
  const status = c.status.value;
  // The answer's screens come with sending (later.ts), so they are there whenever the status asks for them.
  const parts = later.value;
  return (
    <div class={`alm${embedded ? " alm-embedded" : ""}`}>
      {v.headerImage && <img class="alm-header-img" src={v.headerImage} alt="" />}
      <header class="alm-head">
        <h1 id="alm-title">{v.title}</h1>
        {v.description && <p class="alm-lede">{v.description}</p>}
        <p class="alm-org">{v.organization.name}</p>
      </header>
      <FundraisingBar c={c} />
      <EventDetails c={c} />
      {status === "success" && parts ? (
        <parts.Success c={c} />
      ) : status === "declined" && parts ? (
        <parts.Declined c={c} />
      ) : (
        <CheckoutForm c={c} />
      )}
      <Faqs c={c} />
      <DonorList c={c} />
    </div>
  );
}
