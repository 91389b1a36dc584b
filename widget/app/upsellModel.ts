import { batch, type ReadonlySignal, type Signal, signal } from "@preact/signals";
import type { Frequency } from "../../shared/enums.js";
import type { TextFields } from "./textFields.js";
import type { FormView } from "./view.js";

/**
 * "Make it monthly": on forms that enable it, a donor sending a one-time gift at or above the form's minimum
 * is offered, once, a monthly gift of the form's share of it instead. Accepting switches the choice to that
 * monthly amount and lets the donor confirm; declining sends the one-time gift as it was.
 */
export function createUpsellModel(
  view: FormView,
  order: {
    frequency: Signal<Frequency>;
    useCustom: Signal<boolean>;
    chosenAmount: ReadonlySignal<number | null>;
    setFrequency: (f: Frequency) => void;
  },
  text: TextFields,
) {
  const offer = view.options.monthlyUpsell;
  const upsell = signal<{ monthly: number; once: number } | null>(null);
  let offered = false;

  /** Whether sending now should first show the offer (and shows it). Once per checkout. */
  function interceptUpsell(): boolean {
    const once = order.chosenAmount.value;
    if (
      !offer ||
      offered ||
      !view.allowCustomAmount ||
      (view.formType !== "EMBED_FORM" && view.formType !== "CROWDFUNDING_FORM") ||
      order.frequency.value !== "ONE_TIME" ||
      once === null ||
      once < offer.minimum
    )
      return false;
    offered = true;
    upsell.value = { once, monthly: Math.max(1, Math.round(once * offer.ratio)) };
    return true;
  }

  function acceptUpsell(): void {
    const chosen = upsell.value;
    if (!chosen) return;
    batch(() => {
      order.setFrequency("MONTHLY");
      order.useCustom.value = true;
      text.customAmount.value = String(chosen.monthly);
      upsell.value = null;
    });
  }

  function declineUpsell(): void {
    upsell.value = null;
  }

  return { upsell, interceptUpsell, acceptUpsell, declineUpsell };
}
