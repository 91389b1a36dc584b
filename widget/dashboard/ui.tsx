import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";

/**
 * Small pieces every page uses: a labelled field, a message, a page heading that takes focus, the question
 * a destructive action asks before it acts, a button that copies a text.
 */

let fieldCount = 0;
const nextId = (): string => `f${++fieldCount}`;

export function Field(props: {
  label: string;
  hint?: string;
  children: (id: string, describedBy: string | undefined) => JSX.Element;
}) {
  const id = useRef(nextId()).current;
  const hintId = props.hint ? `${id}-hint` : undefined;
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      {props.children(id, hintId)}
      {props.hint && (
        <small id={hintId} class="hint">
          {props.hint}
        </small>
      )}
    </div>
  );
}

/** A refusal or a failure, read out by screen readers when it appears. */
export function ErrorNote(props: { message: string | null | undefined }) {
  if (!props.message) return null;
  return (
    <p class="error" role="alert">
      {props.message}
    </p>
  );
}

export function Notice(props: { message: string | null | undefined }) {
  if (!props.message) return null;
  return (
    <p class="notice" role="status">
      {props.message}
    </p>
  );
}

/** The page's heading: it takes focus when the page opens, so a screen reader starts there. */
export function PageTitle(props: { children: ComponentChildren; title: string }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    document.title = `${props.title} · Almoner`;
    ref.current?.focus();
  }, [props.title]);
  return (
    <h1 tabIndex={-1} ref={ref}>
      {props.children}
    </h1>
  );
}

/**
 * The question an action that cannot be undone asks after its first click, with its two answers: `yes`
 * (e.g. "Yes, delete") acts, `keep` (default "Keep") goes back. In a table's row it is words of the row,
 * named by `question`; `block` makes it a box of its own, named by its paragraph (`question` and `detail`).
 */
export function ConfirmInline(props: {
  /** "Delete Spring appeal?": what the dialog is called. */
  question: string;
  /** What follows from it ("Its page stops taking gifts."), said after the question. */
  detail?: string;
  yes: string;
  keep?: string;
  /** What "Yes" does; while the promise it returns is pending, both answers are disabled (never sent twice). */
  onYes: () => unknown;
  onKeep: () => void;
  block?: boolean;
  /** Both answers are disabled meanwhile (the action is under way). */
  busy?: boolean;
  /** The id of the button that asked: it takes focus again after "Keep". */
  trigger?: string;
}) {
  const id = useRef(nextId()).current;
  const keepButton = useRef<HTMLButtonElement>(null);
  const [working, setWorking] = useState(false);
  const pending = useRef(false);
  const busy = props.busy || working;
  const act = () => {
    if (pending.current || props.busy) return;
    const answer = props.onYes();
    if (!(answer instanceof Promise)) return;
    pending.current = true;
    setWorking(true);
    void answer
      .catch(() => undefined)
      .finally(() => {
        pending.current = false;
        setWorking(false);
      });
  };
  // The button that asked is gone: the question takes its focus, on its least destructive answer (Keep),
  // so that a screen reader reads it and a held or repeated Enter never confirms a refund or a delete.
  useEffect(() => {
    keepButton.current?.focus();
    // Answered: when its focus would be lost with it, the button that asked takes it back if it is still
    // there (a refusal leaves the row as it was); if not, the page keeps it (focusKeeper.ts).
    const trigger = props.trigger;
    return () => {
      if (!trigger) return;
      setTimeout(() => {
        const active = document.activeElement;
        if (!active || active === document.body || !active.isConnected)
          document.getElementById(trigger)?.focus();
      });
    };
  }, []);
  const keep = () => {
    props.onKeep();
    const trigger = props.trigger;
    // The button that asked is back once the page has drawn again.
    if (trigger) setTimeout(() => document.getElementById(trigger)?.focus());
  };
  // Escape answers Keep, as it closes any other dialog; not while the action is under way.
  const onKeyDown = (event: KeyboardEvent) => {
    if (event.key !== "Escape" || busy) return;
    event.preventDefault();
    event.stopPropagation();
    keep();
  };
  const words = props.detail ? `${props.question} ${props.detail}` : props.question;
  const answers = (
    <>
      <button type="button" class="danger" onClick={act} disabled={busy}>
        {props.yes}
      </button>
      <button type="button" class="secondary" ref={keepButton} onClick={keep} disabled={busy}>
        {props.keep ?? "Keep"}
      </button>
    </>
  );
  if (props.block)
    return (
      <div class="confirm" role="alertdialog" aria-labelledby={id} onKeyDown={onKeyDown}>
        <p id={id}>{words}</p>
        {answers}
      </div>
    );
  return (
    <span role="alertdialog" aria-label={props.question} onKeyDown={onKeyDown}>
      {words} {answers}
    </span>
  );
}

/**
 * A button that copies `value`. That it did shows on the button itself ("Copied", `confirm: "button"`), or
 * in a status line after it, read out by screen readers (`confirm: "status"`).
 */
export function CopyButton(props: {
  value: string;
  confirm: "button" | "status";
  /** The id of what it copies' name: screen readers say it after "Copy", which every such button is called. */
  describedBy?: string;
}) {
  const [copied, setCopied] = useState(false);
  const button = (
    <button
      type="button"
      class="secondary"
      aria-describedby={props.describedBy}
      onClick={() =>
        navigator.clipboard
          ?.writeText(props.value)
          .then(() => setCopied(true))
          .catch(() => setCopied(false))
      }
    >
      {copied && props.confirm === "button" ? "Copied" : "Copy"}
    </button>
  );
  if (props.confirm === "button") return button;
  return (
    <>
      {button}
      <span role="status">{copied ? "Copied." : ""}</span>
    </>
  );
}

/**
 * A list edited in place, in a fieldset named by `legend`: one row per item, its fields (`row`) then its
 * "Remove {noun} {n}" button; then a button (`add`) that appends `newItem`; then the list's `errors`.
 */
export function ListEditor<T extends object>(props: {
  legend: string;
  items: T[];
  onChange: (items: T[]) => void;
  /** What a row is called ("ticket": "Remove ticket 2"); with its index, its key unless `rowKey` says. */
  noun: string;
  rowKey?: (item: T) => string | undefined;
  /** A row's fields; `change` merges what it is given into the row's item. */
  row: (item: T, i: number, change: (patch: Partial<T>) => void) => ComponentChildren;
  add: string;
  /** The item the add button appends, given how many there are. */
  newItem: (count: number) => T;
  errors: ComponentChildren;
}) {
  const { items, onChange } = props;
  const add = () => onChange([...items, props.newItem(items.length)]);
  return (
    <fieldset>
      <legend>{props.legend}</legend>
      {items.map((item, i) => (
        <div class="row" key={props.rowKey?.(item) ?? `${props.noun}-${i}`}>
          {props.row(item, i, (patch) =>
            onChange(items.map((it, j) => (j === i ? { ...it, ...patch } : it))),
          )}
          <button type="button" class="secondary" onClick={() => onChange(items.filter((_, j) => j !== i))}>
            {`Remove ${props.noun} `}
            {i + 1}
          </button>
        </div>
      ))}
      <button type="button" class="secondary" onClick={add}>
        {props.add}
      </button>
      {props.errors}
    </fieldset>
  );
}

export const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : "Something went wrong. Try again.";
