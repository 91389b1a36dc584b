import { batch, computed, effect, type ReadonlySignal, signal } from "@preact/signals";
import type { CheckoutEnv } from "./checkoutEnv.js";
import { type ErrorsModel, PROMO_CODE_DETAIL } from "./errorsModel.js";
import type { PostToForm } from "./formApi.js";
import { t as tr } from "./locale.js";
import type { Boot, Quote } from "./view.js";

/**
 * The server's price of the order: asked again (debounced) whenever the order changes, and the total the
 * donor sees, the chosen amount until a quote of the current order arrives.
 */
export function createQuoteModel(
  boot: Boot,
  env: CheckoutEnv,
  post: PostToForm,
  /** The order body to price (JSON), null while there is nothing to price. */
  orderKey: ReadonlySignal<string | null>,
  /** The gift or price chosen: the total until the quote of the current order arrives. */
  chosenAmount: ReadonlySignal<number | null>,
  errors: ErrorsModel["errors"],
) {
  const quote = signal<Quote | null>(boot.quote?.quote ?? null);
  const quotedFor = signal<string | null>(boot.quote?.order ?? null);
  const quoteError = signal<string | null>(null);
  const quoting = signal(false);
  const quoteFresh = computed(() => quote.value !== null && quotedFor.value === orderKey.value);
  const total = computed(() => (quoteFresh.value ? (quote.value as Quote).total : chosenAmount.value));

  let quoteSeq = 0;
  async function refreshQuote(): Promise<void> {
    const key = orderKey.value;
    const seq = ++quoteSeq;
    if (!key) {
      batch(() => {
        quote.value = null;
        quotedFor.value = null;
        quoteError.value = null;
        quoting.value = false;
      });
      return;
    }
    quoting.value = true;
    try {
      const { res, body } = await post<Quote & { details?: string[] }>("/quote", key);
      if (seq !== quoteSeq) return;
      batch(() => {
        if (res.ok) {
          quote.value = body;
          quotedFor.value = key;
          quoteError.value = null;
        } else {
          quote.value = null;
          quotedFor.value = null;
          // In the page's language: the server's details are English. A promo code the event does not
          // take is the donor's to fix at the code itself.
          quoteError.value = tr("checkout.error.quote");
          if (body.details?.some((d) => PROMO_CODE_DETAIL.test(d)))
            errors.value = { ...errors.value, promoCode: tr("checkout.error.promoInvalid") };
        }
      });
    } catch {
      if (seq === quoteSeq) quoteError.value = tr("checkout.error.quoteNetwork");
    } finally {
      if (seq === quoteSeq) quoting.value = false;
    }
  }

  /** Starts the debounced quote on every change of the order; returns a function that stops it. */
  function start(): () => void {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stop = effect(() => {
      const key = orderKey.value;
      if (key !== null && key === quotedFor.value) return;
      clearTimeout(timer);
      timer = setTimeout(() => void refreshQuote(), env.quoteDelayMs ?? 250);
    });
    return () => {
      clearTimeout(timer);
      stop();
    };
  }

  return { quote, quoteError, quoting, quoteFresh, total, start, refreshQuote };
}
