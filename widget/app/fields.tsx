import type { ComponentChildren } from "preact";
import { t } from "./locale.js";
import type { Checkout } from "./store.js";
import type { TextField } from "./textFields.js";

/**
 * Labelled controls. Every control has a visible <label>; an error is rendered next to its field, tied
 * to it by aria-describedby and flagged with aria-invalid ("false" until then). Required fields carry `required` (announced by
 * screen readers) and a visual mark that is hidden from them.
 */

export const fieldId = (name: string) => `alm-${name}`;

export function ErrorText({ c, name }: { c: Checkout; name: string }) {
  const error = c.errors.value[name];
  return error ? (
    <p id={`${fieldId(name)}-err`} class="alm-err">
      {error}
    </p>
  ) : null;
}

export function errorProps(c: Checkout, name: string, hint?: string) {
  const error = c.errors.value[name];
  const described = [hint, error ? `${fieldId(name)}-err` : undefined].filter(Boolean).join(" ");
  return {
    // "false" until a check finds a problem: a browser would otherwise judge a required field left empty
    // (a select showing "Choose…") invalid before the donor has touched it.
    "aria-invalid": error ? ("true" as const) : ("false" as const),
    "aria-describedby": described || undefined,
  };
}

export function Req({ on }: { on?: boolean }) {
  return on ? (
    <span class="alm-req" aria-hidden="true">
      {" "}
      *
    </span>
  ) : null;
}

interface TextProps {
  c: Checkout;
  name: TextField;
  label: string;
  required?: boolean;
  type?: string;
  autoComplete?: string;
  inputMode?: "numeric" | "decimal" | "email" | "tel" | "text";
  placeholder?: string;
  hint?: string;
  class?: string;
  maxLength?: number;
}

export function TextInput(props: TextProps) {
  const { c, name } = props;
  const id = fieldId(name);
  const hintId = props.hint ? `${id}-hint` : undefined;
  return (
    <div class={`alm-field ${props.class ?? ""}`}>
      <label for={id}>
        {props.label}
        <Req on={props.required} />
      </label>
      {props.hint && (
        <p id={hintId} class="alm-hint">
          {props.hint}
        </p>
      )}
      <input
        id={id}
        name={name}
        type={props.type ?? "text"}
        value={c.text[name].value}
        required={props.required}
        autoComplete={props.autoComplete}
        inputMode={props.inputMode}
        // Addresses, numbers and codes read left to right on a right-to-left page too.
        dir={props.inputMode && props.inputMode !== "text" ? "ltr" : undefined}
        placeholder={props.placeholder}
        maxLength={props.maxLength}
        onInput={(e) => {
          c.text[name].value = e.currentTarget.value;
          c.clearError(name);
        }}
        {...errorProps(c, name, hintId)}
      />
      <ErrorText c={c} name={name} />
    </div>
  );
}

/** A group of radio buttons (or checkboxes) under a legend; an error on the group is tied to the group. */
export function Group(props: {
  c: Checkout;
  name: string;
  legend: string;
  children: ComponentChildren;
  class?: string;
  required?: boolean;
}) {
  const { c, name } = props;
  return (
    <fieldset
      class={`alm-group ${props.class ?? ""}`}
      id={fieldId(name)}
      tabIndex={-1}
      {...errorProps(c, name)}
    >
      <legend>
        {props.legend}
        <Req on={props.required} />
        {/* A group has no required attribute to announce: the legend says it. */}
        {props.required && <span class="alm-sr"> ({t("checkout.required.group")})</span>}
      </legend>
      {props.children}
      <ErrorText c={c} name={name} />
    </fieldset>
  );
}

export function Radio(props: {
  name: string;
  value: string;
  /** Position in the group: ids come from it, since values may be any text. */
  index: number;
  checked: boolean;
  disabled?: boolean;
  onSelect: () => void;
  children: ComponentChildren;
  class?: string;
}) {
  const id = fieldId(`${props.name}-${props.index}`);
  return (
    <div class={`alm-choice ${props.class ?? ""}`}>
      <input
        type="radio"
        id={id}
        name={props.name}
        value={props.value}
        checked={props.checked}
        disabled={props.disabled}
        onChange={props.onSelect}
      />
      <label for={id}>{props.children}</label>
    </div>
  );
}
