import { signal } from "@preact/signals";
import { isEmailAddress } from "../../shared/email.js";
import type { TributeKind } from "../../shared/enums.js";
import { t as tr } from "./locale.js";
import { type TextFields, trimmedText } from "./textFields.js";
import type { FormView } from "./view.js";

/**
 * Who the donor is (name, email, phone, organization, address, in the text fields) and what else they tell
 * the form: anonymity, the email opt-in, the answers to its own questions, and a dedication where the form
 * takes one.
 */
export function createDonorModel(
  view: FormView,
  text: TextFields,
  initialAnswers: Record<string, string | string[]>,
) {
  const anonymous = signal(false);
  const emailOptIn = signal(false);
  /** The donor dedicates the gift (the form offers it: `options.tribute`), in honor or in memory. */
  const dedicate = signal(false);
  const tributeKind = signal<TributeKind>("HONOR");
  const answers = signal<Record<string, string | string[]>>(initialAnswers);
  const t = trimmedText(text);

  function setAnswer(id: string, value: string | string[]): void {
    answers.value = { ...answers.value, [id]: value };
  }

  /** What the donor must fix in their details and answers before sending, keyed by field id. */
  function problems(): Record<string, string> {
    const e: Record<string, string> = {};
    for (const input of view.customInputs) {
      const v = answers.value[input.id];
      if (input.required && (v === undefined || (Array.isArray(v) ? v.length === 0 : v.trim() === "")))
        e[`ci-${input.id}`] = `${input.title} is required.`;
    }
    if (!t("firstName")) e.firstName = tr("checkout.error.firstName");
    if (!t("lastName")) e.lastName = tr("checkout.error.lastName");
    if (!isEmailAddress(t("email"))) e.email = tr("checkout.error.email");
    if (view.options.tribute && dedicate.value) {
      if (!t("honoreeName")) e.honoreeName = tr("checkout.error.honoreeName");
      if (t("tributeEmail") && !isEmailAddress(t("tributeEmail")))
        e.tributeEmail = tr("checkout.error.tributeEmail");
    }
    return e;
  }

  /** The checkout's `donor`: the fields the form asks for that the donor filled. */
  function donorBody(): Record<string, unknown> {
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
    return donor;
  }

  /**
   * The checkout's `anonymous` (when the form offers it), `emailOptIn`, `customInputs` (those answered) and
   * `tribute` (when the donor dedicates the gift).
   */
  function answersBody(): Record<string, unknown> {
    const body: Record<string, unknown> = {};
    if (view.options.anonymous && anonymous.value) body.anonymous = true;
    body.emailOptIn = emailOptIn.value;
    const given = Object.fromEntries(
      Object.entries(answers.value).filter(
        ([id, v]) => view.customInputs.some((i) => i.id === id) && (Array.isArray(v) ? v.length : v.trim()),
      ),
    );
    if (Object.keys(given).length) body.customInputs = given;
    if (view.options.tribute && dedicate.value) {
      const tribute: Record<string, string> = { kind: tributeKind.value, honoreeName: t("honoreeName") };
      if (t("tributeEmail")) tribute.notifyEmail = t("tributeEmail");
      if (t("tributeMessage")) tribute.message = t("tributeMessage");
      body.tribute = tribute;
    }
    return body;
  }

  return {
    anonymous,
    emailOptIn,
    dedicate,
    tributeKind,
    answers,
    setAnswer,
    problems,
    donorBody,
    answersBody,
  };
}

export type DonorModel = ReturnType<typeof createDonorModel>;
