import type { ComponentChildren, JSX } from "preact";
import { useEffect, useRef } from "preact/hooks";

/** Small pieces every page uses: a labelled field, a message, a page heading that takes focus. */

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

export const messageOf = (error: unknown): string =>
  error instanceof Error ? error.message : "Something went wrong. Try again.";
