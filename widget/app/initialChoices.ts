import type { Frequency } from "../../shared/enums.js";
import type { TextField } from "./textFields.js";
import type { FormView } from "./view.js";

/** What the checkout starts with: the choices and texts of the link's prefill, else the form's defaults. */

/** A prefill key of the donor's details → the text field it fills. */
const DONOR_KEYS = {
  firstName: "firstName",
  lastName: "lastName",
  email: "email",
  phone: "phone",
  organizationName: "organizationName",
  address1: "line1",
  address2: "line2",
  city: "city",
  state: "region",
  postalCode: "postal",
  country: "country",
} as const;

export interface InitialChoices {
  /** The frequencies the donor may choose: event and sponsorship orders are one-time only. */
  frequencies: Frequency[];
  frequency: Frequency;
  fund: string;
  /** Standard forms: the preset chosen (or the custom amount typed); null on other forms. */
  amount: number | null;
  /** Giving-level forms: the level chosen. */
  level: string | null;
  /** A custom amount is typed (in `text.customAmount`) rather than a preset or level chosen. */
  useCustom: boolean;
  product: { group: string; name: string } | null;
  /** Ticket name → quantity. */
  tickets: Record<string, number>;
  /** Custom input id → answer. */
  answers: Record<string, string | string[]>;
  /** The text fields filled in advance. */
  text: Partial<Record<TextField, string>>;
}

export function initialChoices(view: FormView): InitialChoices {
  const p = view.prefill;
  const kind = view.formType;
  const text: Partial<Record<TextField, string>> = {};
  for (const [from, to] of Object.entries(DONOR_KEYS)) {
    const value = p?.[from as keyof typeof DONOR_KEYS];
    if (value) text[to] = value;
  }

  const frequencies = (
    kind === "EVENT" || kind === "PRODUCT" ? ["ONE_TIME"] : view.frequencies
  ) as Frequency[];
  const frequency =
    p?.frequency && frequencies.includes(p.frequency)
      ? p.frequency
      : frequencies.includes(view.defaultFrequency as Frequency)
        ? (view.defaultFrequency as Frequency)
        : frequencies[0];

  // Standard and giving-level amounts: a preset (or level) chosen, or a custom amount typed.
  const presets = view.amounts[frequency] ?? [];
  let amount: number | null = p?.amount ?? view.defaultAmount;
  const level =
    kind === "CROWDFUNDING_FORM"
      ? (view.givingLevels.find((l) => l.amount === amount)?.title ??
        (p?.amount ? null : view.givingLevels[0]?.title))
      : null;
  if (kind === "EMBED_FORM" && amount === null) amount = presets[1] ?? presets[0] ?? null;
  let useCustom = false;
  if (kind === "EMBED_FORM" && amount !== null && !presets.includes(amount) && view.allowCustomAmount) {
    useCustom = true;
    text.customAmount = String(amount);
  }
  if (kind === "CROWDFUNDING_FORM" && !level && p?.amount && view.allowCustomAmount) {
    useCustom = true;
    text.customAmount = String(p.amount);
  }

  // Sponsorship product: only one that is not sold out.
  const group = view.productGroups.find((g) => g.productGroupName === p?.sponsorshipGroup);
  const product = group?.products.find((x) => x.productName === p?.product && !x.soldOut);

  return {
    frequencies,
    frequency,
    fund: p?.fund && view.funds.includes(p.fund) ? p.fund : view.funds[0],
    amount: kind === "EMBED_FORM" ? amount : null,
    level: level ?? null,
    useCustom,
    product: group && product ? { group: group.productGroupName, name: product.productName } : null,
    // Event tickets: one of the ticket named, unless it is sold out.
    tickets: Object.fromEntries(
      view.tickets.map((t) => [t.name, p?.ticket === t.name && !t.soldOut ? 1 : 0]),
    ),
    answers: { ...(p?.customInputs ?? {}) },
    text,
  };
}
