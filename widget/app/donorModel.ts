import { signal } from "@preact/signals";
import type { TributeKind } from "../../shared/enums.js";

/**
 * Who the donor is (name, email, phone, organization, address, in the text fields) and what else they tell
 * the form: anonymity, the email opt-in, the answers to its own questions, and a dedication where the form
 * takes one. They are checked and put in the checkout request by checkoutRequest.ts.
 */
export function createDonorModel(initialAnswers: Record<string, string | string[]>) {
  const anonymous = signal(false);
  const emailOptIn = signal(false);
  /** The donor dedicates the gift (the form offers it: `options.tribute`), in honor or in memory. */
  const dedicate = signal(false);
  const tributeKind = signal<TributeKind>("HONOR");
  const answers = signal<Record<string, string | string[]>>(initialAnswers);

  function setAnswer(id: string, value: string | string[]): void {
    answers.value = { ...answers.value, [id]: value };
  }

  return { anonymous, emailOptIn, dedicate, tributeKind, answers, setAnswer };
}

export type DonorModel = ReturnType<typeof createDonorModel>;
