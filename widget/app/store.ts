import { batch, computed, effect, type Signal, signal } from "@preact/signals";
import { isEmailAddress } from "../../shared/email.js";
import type { Frequency } from "../../shared/enums.js";
import { type Boot, type FormView, money, type Quote, type Receipt } from "./view.js";

/**
 * The checkout's state: one signal per choice and per field, the order and checkout bodies derived from them,
 * and the three calls of the public API (quote as choices change, debounced; checkout on submit). Components
 * only read signals and call the actions here. No totals are computed for charging: the server prices.
 */

export type Utm = Partial<Record<"source" | "medium" | "campaign" | "term" | "content", string>>;

export interface CheckoutEnv {
  /** Origin + path prefix of the API; "" on the form host's own pages. */
  apiBase?: string;
  fetch?: typeof fetch;
  utm?: Utm;
  elementId?: string;
  quoteDelayMs?: number;
  onComplete?: (receipt: Receipt) => void;
}

export const TEXT_FIELDS = [
  "firstName",
  "lastName",
  "email",
  "phone",
  "organizationName",
  "line1",
  "line2",
  "city",
  "region",
  "postal",
  "country",
  "customAmount",
  "extraDonation",
  "promoCode",
  "cardNumber",
  "cardExp",
  "cardCvc",
  "cardPostal",
  "routingNumber",
  "accountNumber",
  "accountHolder",
  "website",
] as const;
export type TextField = (typeof TEXT_FIELDS)[number];

export type Status = "form" | "submitting" | "success" | "declined";

/**
 * A processor's own fields on the page (Stripe's Payment Element, in the module stripe.js loads) collect
 * the card or bank account and give the checkout a token; card data never passes through this app.
 */
export interface PaymentCollector {
  /** Checks the processor's fields and makes the token the checkout sends, or says what to fix. */
  collect(): Promise<{ token: string } | { error: string }>;
  /** The donor confirms the payment with their bank (3-D Secure); an error when they could not. */
  confirm(clientSecret: string): Promise<{ error?: string }>;
  /** Puts the focus in the processor's fields, as soon as they can take it. */
  focus(): void;
}

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

function parseDollars(text: string): number | null {
  const cleaned = text.replace(/[$,\s]/g, "");
  if (!/^\d+(\.\d{1,2})?$/.test(cleaned)) return null;
  return Number(cleaned);
}

function newKey(): string {
  const c = globalThis.crypto;
  return c?.randomUUID ? c.randomUUID() : `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
}

export function createCheckout(boot: Boot, env: CheckoutEnv = {}) {
  const view: FormView = boot.view;
  const p = view.prefill;
  const kind = view.formType;
  const oneTimeOnly = kind === "EVENT" || kind === "PRODUCT";
  const api = `${env.apiBase ?? ""}/api/forms/${encodeURIComponent(view.formID)}`;
  const doFetch = env.fetch ?? ((...args: Parameters<typeof fetch>) => fetch(...args));

  const text = Object.fromEntries(TEXT_FIELDS.map((k) => [k, signal("")])) as Record<
    TextField,
    Signal<string>
  >;
  for (const [from, to] of Object.entries(DONOR_KEYS)) {
    const value = p?.[from as keyof typeof DONOR_KEYS];
    if (value) text[to].value = value;
  }

  const frequencies = (oneTimeOnly ? ["ONE_TIME"] : view.frequencies) as Frequency[];
  const startFrequency =
    p?.frequency && frequencies.includes(p.frequency)
      ? p.frequency
      : frequencies.includes(view.defaultFrequency as Frequency)
        ? (view.defaultFrequency as Frequency)
        : frequencies[0];
  const frequency = signal<Frequency>(startFrequency);
  const fund = signal(p?.fund && view.funds.includes(p.fund) ? p.fund : view.funds[0]);

  // Standard and giving-level amounts: a preset (or level) chosen, or a custom amount typed.
  const presets = computed(() => view.amounts[frequency.value] ?? []);
  let startAmount: number | null = p?.amount ?? view.defaultAmount;
  const startLevel =
    kind === "CROWDFUNDING_FORM"
      ? (view.givingLevels.find((l) => l.amount === startAmount)?.title ??
        (p?.amount ? null : view.givingLevels[0]?.title))
      : null;
  if (kind === "EMBED_FORM" && startAmount === null)
    startAmount = presets.value[1] ?? presets.value[0] ?? null;
  const amount = signal<number | null>(kind === "EMBED_FORM" ? startAmount : null);
  const level = signal<string | null>(startLevel ?? null);
  const useCustom = signal(false);
  if (
    kind === "EMBED_FORM" &&
    startAmount !== null &&
    !presets.value.includes(startAmount) &&
    view.allowCustomAmount
  ) {
    useCustom.value = true;
    text.customAmount.value = String(startAmount);
  }
  if (kind === "CROWDFUNDING_FORM" && !startLevel && p?.amount && view.allowCustomAmount) {
    useCustom.value = true;
    text.customAmount.value = String(p.amount);
  }

  // Sponsorship product.
  const startGroup = view.productGroups.find((g) => g.productGroupName === p?.sponsorshipGroup);
  const startProduct = startGroup?.products.find((x) => x.productName === p?.product && !x.soldOut);
  const product = signal<{ group: string; name: string } | null>(
    startGroup && startProduct
      ? { group: startGroup.productGroupName, name: startProduct.productName }
      : null,
  );

  // Event tickets.
  const tickets = signal<Record<string, number>>(
    Object.fromEntries(view.tickets.map((t) => [t.name, p?.ticket === t.name && !t.soldOut ? 1 : 0])),
  );
  const appliedPromo = signal("");

  const coverFees = signal(false);
  const anonymous = signal(false);
  const emailOptIn = signal(false);
  const method = signal<"card" | "bank">("card");
  const answers = signal<Record<string, string | string[]>>({ ...(p?.customInputs ?? {}) });
  const errors = signal<Record<string, string>>({});
  const formError = signal<string | null>(null);
  const status = signal<Status>("form");
  /** False in the server's HTML until the app has taken it over: the button cannot submit a bare form. */
  const ready = signal(false);
  const receipt = signal<Receipt | null>(null);
  const thanks = signal("");
  const declineMessage = signal("");
  const quote = signal<Quote | null>(boot.quote?.quote ?? null);
  const quotedFor = signal<string | null>(boot.quote?.order ?? null);
  const quoteError = signal<string | null>(null);
  const quoting = signal(false);
  /** The processor's fields (stripe.js) once they are on the page; null: the app's own fields. */
  let collector: PaymentCollector | null = null;
  const browserCollected = view.payment?.processor === "stripe";

  /** The order as the API takes it, or null while it is incomplete (nothing to price yet). */
  const order = computed<Record<string, unknown> | null>(() => {
    const base: Record<string, unknown> = { frequency: frequency.value, fund: fund.value };
    if (coverFees.value) base.coverFees = true;
    if (kind === "EMBED_FORM" || kind === "CROWDFUNDING_FORM") {
      if (useCustom.value) {
        const dollars = parseDollars(text.customAmount.value);
        if (dollars === null || dollars <= 0) return null;
        return { ...base, amount: dollars };
      }
      if (kind === "CROWDFUNDING_FORM") return level.value ? { ...base, givingLevel: level.value } : null;
      return amount.value === null ? null : { ...base, amount: amount.value };
    }
    if (kind === "PRODUCT") return product.value ? { ...base, product: product.value } : null;
    const chosen = Object.entries(tickets.value)
      .filter(([, q]) => q > 0)
      .map(([name, quantity]) => ({ name, quantity }));
    if (chosen.length === 0) return null;
    const out: Record<string, unknown> = { ...base, tickets: chosen };
    if (appliedPromo.value) out.promoCode = appliedPromo.value;
    const extra = parseDollars(text.extraDonation.value);
    if (extra) out.extraDonation = extra;
    return out;
  });
  const orderKey = computed(() => (order.value ? JSON.stringify(order.value) : null));
  const quoteFresh = computed(() => quote.value !== null && quotedFor.value === orderKey.value);

  /** The gift or price chosen, before fees and discounts: what the button names until the quote arrives. */
  const chosenAmount = computed<number | null>(() => {
    const o = order.value;
    if (!o) return null;
    if (typeof o.amount === "number") return o.amount;
    if (kind === "CROWDFUNDING_FORM")
      return view.givingLevels.find((l) => l.title === level.value)?.amount ?? null;
    if (kind === "PRODUCT") {
      const g = view.productGroups.find((x) => x.productGroupName === product.value?.group);
      return g?.products.find((x) => x.productName === product.value?.name)?.price ?? null;
    }
    const sum = view.tickets.reduce((s, t) => s + t.price * (tickets.value[t.name] ?? 0), 0);
    return sum + (parseDollars(text.extraDonation.value) ?? 0);
  });
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
      const res = await doFetch(`${api}/quote`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: key,
      });
      const body = (await res.json()) as Quote & { error?: string; details?: string[] };
      if (seq !== quoteSeq) return;
      batch(() => {
        if (res.ok) {
          quote.value = body;
          quotedFor.value = key;
          quoteError.value = null;
        } else {
          quote.value = null;
          quotedFor.value = null;
          quoteError.value = body.details?.join(" ") || body.error || "This order cannot be priced.";
          // A promo code the event does not know is the donor's to fix at the code itself.
          const promo = fieldErrors(body.details ?? []).promoCode;
          if (promo) errors.value = { ...errors.value, promoCode: promo };
        }
      });
    } catch {
      if (seq === quoteSeq) quoteError.value = "The total could not be updated. Check your connection.";
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

  function setFrequency(f: Frequency): void {
    batch(() => {
      frequency.value = f;
      // The presets differ per frequency: keep the amount only when it is one of the new presets.
      if (
        kind === "EMBED_FORM" &&
        !useCustom.value &&
        amount.value !== null &&
        !presets.value.includes(amount.value)
      )
        amount.value = presets.value[1] ?? presets.value[0] ?? null;
    });
  }

  function setTicket(name: string, quantity: number): void {
    tickets.value = { ...tickets.value, [name]: quantity };
  }

  function setAnswer(id: string, value: string | string[]): void {
    answers.value = { ...answers.value, [id]: value };
  }

  function clearError(field: string): void {
    if (errors.value[field] === undefined) return;
    const { [field]: _, ...rest } = errors.value;
    errors.value = rest;
  }

  /** Every problem the donor can fix before sending, keyed by field id. */
  function validate(): Record<string, string> {
    const e: Record<string, string> = {};
    const t = (k: TextField) => text[k].value.trim();
    if (kind === "EMBED_FORM" || kind === "CROWDFUNDING_FORM") {
      if (useCustom.value) {
        const d = parseDollars(t("customAmount"));
        if (d === null || d < view.minAmount || d > view.maxAmount)
          e.customAmount = `Enter an amount from ${money(view.minAmount)} to ${money(view.maxAmount)}.`;
      } else if (!order.value)
        e.amount = kind === "EMBED_FORM" ? "Choose an amount." : "Choose a giving level.";
    }
    if (kind === "PRODUCT" && !product.value) e.product = "Choose a sponsorship.";
    if (kind === "EVENT") {
      if (!Object.values(tickets.value).some((q) => q > 0)) e.tickets = "Choose at least one ticket.";
      if (t("extraDonation") && parseDollars(t("extraDonation")) === null)
        e.extraDonation = "Enter an amount in dollars.";
      if (t("promoCode") && t("promoCode").toUpperCase() !== appliedPromo.value.toUpperCase())
        e.promoCode = "Apply the promo code, or clear it.";
    }
    for (const input of view.customInputs) {
      const v = answers.value[input.id];
      if (input.required && (v === undefined || (Array.isArray(v) ? v.length === 0 : v.trim() === "")))
        e[`ci-${input.id}`] = `${input.title} is required.`;
    }
    if (!t("firstName")) e.firstName = "Enter your first name.";
    if (!t("lastName")) e.lastName = "Enter your last name.";
    if (!isEmailAddress(t("email"))) e.email = "Enter a valid email address, like name@example.org.";
    if (total.value !== 0 && !browserCollected) {
      if (method.value === "card") {
        const digits = t("cardNumber").replace(/[\s-]/g, "");
        if (!/^\d{12,19}$/.test(digits)) e.cardNumber = "Enter the card number (12 to 19 digits).";
        if (!parseExpiry(t("cardExp"))) e.cardExp = "Enter the expiry as MM/YY.";
        if (!/^\d{3,4}$/.test(t("cardCvc"))) e.cardCvc = "Enter the 3 or 4 digit security code.";
      } else {
        if (!/^\d{9}$/.test(t("routingNumber").replace(/[\s-]/g, "")))
          e.routingNumber = "Enter the 9-digit routing number.";
        if (!/^\d{4,17}$/.test(t("accountNumber").replace(/[\s-]/g, "")))
          e.accountNumber = "Enter the account number (4 to 17 digits).";
        if (!t("accountHolder")) e.accountHolder = "Enter the account holder's name.";
      }
    }
    return e;
  }

  function checkoutBody(): Record<string, unknown> {
    const t = (k: TextField) => text[k].value.trim();
    const donor: Record<string, unknown> = {
      firstName: t("firstName"),
      lastName: t("lastName"),
      email: t("email"),
    };
    if (view.options.phone && t("phone")) donor.phone = t("phone");
    if (view.options.organizationName && t("organizationName"))
      donor.organizationName = t("organizationName");
    const address: Record<string, string> = {};
    if (view.options.billingAddress)
      for (const k of ["line1", "line2", "city", "region", "postal"] as const) if (t(k)) address[k] = t(k);
    if ((view.options.country || view.options.billingAddress) && t("country")) address.country = t("country");
    if (Object.keys(address).length) donor.address = address;
    const body: Record<string, unknown> = { ...(order.value ?? {}), donor };
    if (total.value !== 0 && !browserCollected) {
      if (method.value === "card") {
        const exp = parseExpiry(t("cardExp")) ?? { month: 0, year: 0 };
        body.paymentMethod = {
          type: "card",
          number: t("cardNumber"),
          expMonth: exp.month,
          expYear: exp.year,
          cvc: t("cardCvc"),
          ...(t("cardPostal") ? { postalCode: t("cardPostal") } : {}),
        };
      } else
        body.paymentMethod = {
          type: "bank",
          routingNumber: t("routingNumber"),
          accountNumber: t("accountNumber"),
          accountHolder: t("accountHolder"),
        };
    }
    if (view.options.anonymous && anonymous.value) body.anonymous = true;
    body.emailOptIn = emailOptIn.value;
    const given = Object.fromEntries(
      Object.entries(answers.value).filter(
        ([id, v]) => view.customInputs.some((i) => i.id === id) && (Array.isArray(v) ? v.length : v.trim()),
      ),
    );
    if (Object.keys(given).length) body.customInputs = given;
    const utm = { ...(p?.utm ?? {}), ...(env.utm ?? {}) };
    if (Object.keys(utm).length) body.utm = utm;
    if (env.elementId) body.elementId = env.elementId;
    if (text.website.value) body.website = text.website.value;
    return body;
  }

  let idempotencyKey = newKey();

  async function post(url: string, body: string, key?: string) {
    const headers: Record<string, string> = { "Content-Type": "application/json" };
    if (key) headers["Idempotency-Key"] = key;
    const res = await doFetch(url, { method: "POST", headers, body });
    return { res, body: (await res.json()) as Record<string, unknown> };
  }

  async function submit(): Promise<void> {
    if (status.value === "submitting") return;
    const found = validate();
    errors.value = found;
    formError.value = null;
    if (Object.keys(found).length) {
      const n = Object.keys(found).length;
      formError.value = `Please fix ${n === 1 ? "1 field" : `${n} fields`}: each one says what is missing.`;
      return;
    }
    status.value = "submitting";
    const payload = checkoutBody();
    if (browserCollected && total.value !== 0) {
      const collected = collector
        ? await collector.collect()
        : { error: "The payment fields are still loading. Try again in a moment." };
      if ("error" in collected) {
        batch(() => {
          status.value = "form";
          errors.value = { ...errors.value, payment: collected.error };
          formError.value = collected.error;
        });
        return;
      }
      payload.paymentMethod = { type: "token", token: collected.token };
    }
    let answer: { res: Response; body: Record<string, unknown> };
    try {
      answer = await post(`${api}/checkout`, JSON.stringify(payload), idempotencyKey);
      // The donor's bank asks them to confirm (3-D Secure): then the server records what came of it.
      if (answer.res.status === 202 && typeof answer.body.clientSecret === "string") {
        const confirmed = collector ? await collector.confirm(answer.body.clientSecret) : { error: "" };
        answer = await post(
          `${api}/checkout/${encodeURIComponent(String(answer.body.paymentID))}/complete`,
          "{}",
        );
        // Stripe.js words a failed confirmation for the donor; the server's record has the API's wording.
        if (confirmed.error && (answer.res.status === 202 || answer.res.status === 402))
          answer = { res: new Response(null, { status: 402 }), body: { error: confirmed.error } };
      }
    } catch {
      batch(() => {
        status.value = "form";
        formError.value =
          "We could not reach the server. Nothing was charged; check your connection and try again.";
      });
      return;
    }
    const { res, body } = answer;
    // A definitive answer ends this attempt; the next one is a new checkout.
    if (res.status !== 409 && res.status < 500) idempotencyKey = newKey();
    batch(() => {
      if (res.status === 201) {
        receipt.value = body.payment as Receipt;
        thanks.value = String(body.message ?? "Thank you!");
        status.value = "success";
      } else if (res.status === 402) {
        declineMessage.value = String(body.error ?? "Your payment was declined.");
        status.value = "declined";
      } else {
        status.value = "form";
        const details = (body.details as string[] | undefined) ?? [];
        errors.value = fieldErrors(details);
        formError.value = [String(body.error ?? "Something went wrong."), ...details].join(" ");
      }
    });
    if (res.status === 201 && receipt.value) env.onComplete?.(receipt.value);
  }

  /** Back from a decline, the processor's fields take the focus once they are on the page again. */
  let focusCollector = false;

  /** The processor's fields say they are ready (or gone, with null). */
  function setCollector(next: PaymentCollector | null): void {
    collector = next;
    if (next && focusCollector) {
      focusCollector = false;
      next.focus();
    }
  }

  /** Back from a decline: the card fields are cleared so the donor enters another one. */
  function retry(): void {
    batch(() => {
      for (const k of ["cardNumber", "cardExp", "cardCvc", "routingNumber", "accountNumber"] as const)
        text[k].value = "";
      status.value = "form";
      formError.value = `${declineMessage.value} Nothing was charged.`;
    });
    focusCollector = browserCollected;
  }

  function applyPromo(): void {
    appliedPromo.value = text.promoCode.value.trim();
    clearError("promoCode");
  }

  return {
    view,
    kind,
    frequencies,
    text,
    frequency,
    fund,
    presets,
    amount,
    level,
    useCustom,
    product,
    tickets,
    appliedPromo,
    coverFees,
    anonymous,
    emailOptIn,
    method,
    answers,
    errors,
    formError,
    status,
    ready,
    receipt,
    thanks,
    declineMessage,
    quote,
    quoteError,
    quoting,
    quoteFresh,
    order,
    orderKey,
    total,
    start,
    refreshQuote,
    setFrequency,
    setTicket,
    setAnswer,
    clearError,
    validate,
    checkoutBody,
    submit,
    retry,
    applyPromo,
    setCollector,
  };
}

export type Checkout = ReturnType<typeof createCheckout>;

/** MM/YY, MM / YY or MM/YYYY → month and four-digit year. */
export function parseExpiry(text: string): { month: number; year: number } | null {
  const m = /^(\d{1,2})\s*\/\s*(\d{2}|\d{4})$/.exec(text.trim());
  if (!m) return null;
  const month = Number(m[1]);
  const year = m[2].length === 2 ? 2000 + Number(m[2]) : Number(m[2]);
  return month >= 1 && month <= 12 ? { month, year } : null;
}

/** Server details ("donor.email must be …") tied to the fields they name. */
export function fieldErrors(details: string[]): Record<string, string> {
  const map: [RegExp, string][] = [
    [/^donor\.email/, "email"],
    [/^donor\.firstName/, "firstName"],
    [/^donor\.lastName/, "lastName"],
    [/^donor\.phone/, "phone"],
    [/^paymentMethod\.number|^paymentMethod .*card/i, "cardNumber"],
    [/^paymentMethod\.cvc/, "cardCvc"],
    [/^paymentMethod\.exp/, "cardExp"],
    [/^paymentMethod\.routingNumber/, "routingNumber"],
    [/^paymentMethod\.accountNumber/, "accountNumber"],
    [/^Promo code|^promoCode/, "promoCode"],
    [/^amount/, "customAmount"],
    [/^tickets/, "tickets"],
    [/^product/, "product"],
  ];
  const out: Record<string, string> = {};
  for (const d of details) {
    const hit = map.find(([re]) => re.test(d));
    if (hit && !out[hit[1]]) out[hit[1]] = d;
  }
  return out;
}
