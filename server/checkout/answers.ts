import { type AnyCustomInput, customInputsOf, findInput } from "../../shared/prefill.js";
import type { FormConfig } from "../../shared/schemas/form.js";
import type { GlobalCustomInput } from "../../shared/schemas/organization.js";
import type { CustomAnswer } from "../store/payments.js";

/**
 * The donor's answers to the form's and the organization's custom inputs, keyed by id or title:
 * required ones answered, select answers among the options, unknown keys refused with the valid ones listed.
 */
export function checkAnswers(
  form: FormConfig,
  globals: GlobalCustomInput[],
  raw: Record<string, string | string[]> | undefined,
  details: string[],
): CustomAnswer[] {
  const inputs = customInputsOf(form, globals);
  const answers = new Map<string, CustomAnswer>();
  for (const [key, value] of Object.entries(raw ?? {})) {
    const input = findInput(inputs, key);
    if (!input) {
      const valid = inputs.flatMap((i) => [i.id, i.title]);
      details.push(
        valid.length
          ? `customInputs.${key} is not an input of this form; valid ids and titles: ${valid.join(", ")}`
          : `customInputs.${key} is not an input of this form (it has no custom inputs)`,
      );
      continue;
    }
    const problem = answerProblem(input, value);
    if (problem) details.push(`customInputs.${key} ${problem}`);
    else if (!isBlank(value))
      answers.set(input.id, { id: input.id, title: input.title, value: clean(value) });
  }
  for (const input of inputs) {
    if (input.required && !answers.has(input.id)) details.push(`customInputs.${input.title} is required`);
  }
  return [...answers.values()];
}

function isBlank(value: string | string[]): boolean {
  return Array.isArray(value) ? value.length === 0 : value.trim() === "";
}

function clean(value: string | string[]): string | string[] {
  return Array.isArray(value) ? value : value.trim();
}

function answerProblem(input: AnyCustomInput, value: string | string[]): string | null {
  if (input.kind === "text") return typeof value === "string" ? null : "must be text";
  if (input.kind === "single") {
    if (typeof value !== "string") return "must be one of the options (a string)";
    return value === "" || input.options.includes(value)
      ? null
      : `must be one of: ${input.options.join(", ")}`;
  }
  if (!Array.isArray(value)) return "must be a list of options";
  const bad = value.filter((v) => !input.options.includes(v));
  if (bad.length) return `must contain only these options: ${input.options.join(", ")}`;
  if (new Set(value).size !== value.length) return "must not repeat an option";
  return null;
}
