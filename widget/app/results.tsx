import { useEffect, useRef } from "preact/hooks";
import { cardBrandName } from "../../shared/cardBrands.js";
import { pageLanguage, t } from "./locale.js";
import type { Checkout } from "./store.js";
import { acceptUpsell, keepOneTime, monthlySuggestion, retry } from "./submissionModel.js";
import { adverbOf, longDate, money } from "./view.js";

/**
 * What the checkout shows once the donor has sent it: the monthly offer (in place of the button), the
 * receipt, or the decline. Never in the page's first HTML, so loaded after the page is up (later.ts).
 */

/** "Make it monthly?": shown in place of the button, once, when a qualifying one-time gift is sent. */
export function UpsellOffer({ c }: { c: Checkout }) {
  const ref = useRef<HTMLElement>(null);
  useEffect(() => ref.current?.focus(), []);
  // Both answers name the order as it is now: "No" the total it charges (a covered fee included), "Yes" the
  // monthly share of the gift now chosen. An order changed so that it no longer qualifies takes the offer away.
  const suggested = monthlySuggestion(c);
  useEffect(() => {
    if (suggested === null) c.upsell.value = false;
  }, [suggested]);
  if (!c.upsell.value || suggested === null) return null;
  const monthly = money(suggested);
  // A suggestion needs a gift chosen, so there is a total: the quote's, or the gift until it comes.
  const once = money(c.total.value ?? 0);
  return (
    <section class="alm-upsell" aria-labelledby="alm-h-upsell" tabIndex={-1} ref={ref}>
      <h2 id="alm-h-upsell">{t("checkout.upsell.heading")}</h2>
      <p>{t("checkout.upsell.body", { monthly, once })}</p>
      <button
        type="button"
        class="alm-submit"
        onClick={() => {
          acceptUpsell(c);
          // The donor confirms the monthly gift with the form's own button.
          setTimeout(() => document.querySelector<HTMLElement>(".alm-submit")?.focus(), 0);
        }}
      >
        {t("checkout.upsell.yes", { monthly })}
      </button>
      <button type="button" class="alm-secondary alm-upsell-no" onClick={() => void keepOneTime(c)}>
        {t("checkout.upsell.no", { once })}
      </button>
    </section>
  );
}

export function Success({ c }: { c: Checkout }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);
  const r = c.receipt.value;
  return (
    <div class="alm-result" role="status" tabIndex={-1} ref={ref}>
      <h2>{t("checkout.success.heading", { kind: c.kind })}</h2>
      <p>{c.thanks.value}</p>
      {r && (
        <dl>
          <dt>
            {r.status === "PENDING" ? t("checkout.success.amountPending") : t("checkout.success.amount")}
          </dt>
          <dd>
            {money(r.total)}
            {r.subscription ? ` ${adverbOf(r.frequency)}` : ""}
          </dd>
          {r.paymentMethod?.last4 && (
            <>
              <dt>{t("checkout.success.paidWith")}</dt>
              <dd>
                {t("checkout.success.ending", {
                  method:
                    r.paymentMethod.type === "bank"
                      ? t("checkout.success.bankAccount")
                      : brandName(r.paymentMethod.brand),
                  last4: r.paymentMethod.last4,
                })}
              </dd>
            </>
          )}
          {r.subscription && (
            <>
              <dt>{t("checkout.success.next")}</dt>
              <dd>{longDate(r.subscription.nextBillingDay, pageLanguage())}</dd>
            </>
          )}
          <dt>{t("checkout.success.reference")}</dt>
          <dd>{r.paymentID}</dd>
        </dl>
      )}
    </div>
  );
}

function brandName(brand: string | null): string {
  return cardBrandName(brand) ?? t("checkout.success.card");
}

export function Declined({ c }: { c: Checkout }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <div class="alm-result alm-declined" role="alert" tabIndex={-1} ref={ref}>
      <h2>{t("checkout.declined.heading")}</h2>
      <p>
        {c.declineMessage.value} {t("checkout.declined.nothingCharged")}
      </p>
      <button
        type="button"
        class="alm-submit"
        onClick={() => {
          retry(c);
          setTimeout(
            () =>
              document
                .getElementById(`alm-${c.method.value === "card" ? "cardNumber" : "accountNumber"}`)
                ?.focus(),
            0,
          );
        }}
      >
        {t("checkout.declined.retry", { method: c.method.value === "card" ? "card" : "account" })}
      </button>
    </div>
  );
}
