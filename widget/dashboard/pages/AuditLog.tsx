import { useState } from "preact/hooks";
import { AUDIT_ACTIONS } from "../../../shared/enums.js";
import { downloadCsv, query } from "../api.js";
import { orgNow, when } from "../format.js";
import { ListFooter, useDraft, usePagedList } from "../list.js";
import type { PageProps } from "../page.js";
import { navigate, to } from "../router.js";
import { isOwner } from "../session.js";
import { ErrorNote, Field, messageOf, PageTitle } from "../ui.js";

/** The audit log (Owners): who did what and when, with the values before and after; filters in the address. */

interface AuditEntry {
  id: string;
  createdAt: string;
  actor: { type: string; id: string; label: string | null };
  action: string;
  subject: { type: string; id: string };
  before: Record<string, unknown>;
  after: Record<string, unknown>;
}

const FILTERS = ["actorType", "actor", "action", "from", "to"];
const ACTOR_TYPES = ["staff", "key", "donor", "system"];

const actorText = (actor: AuditEntry["actor"]): string => {
  const who = actor.label || actor.id || "";
  if (actor.type === "key") return `API key ${who}`;
  if (actor.type === "donor") return `Donor ${who}`;
  if (actor.type === "system") return "Almoner";
  return who;
};

const changes = (entry: AuditEntry): string =>
  [...new Set([...Object.keys(entry.before ?? {}), ...Object.keys(entry.after ?? {})])]
    .map(
      (key) =>
        `${key}: ${JSON.stringify(entry.before?.[key] ?? null)} → ${JSON.stringify(entry.after?.[key] ?? null)}`,
    )
    .join("\n");

export default function AuditLog(props: PageProps) {
  const filters = Object.fromEntries(FILTERS.map((n) => [n, props.query.get(n) ?? ""]).filter(([, v]) => v));
  const [draft, setDraft] = useDraft<Record<string, string>>(filters);
  const [error, setError] = useState<string | null>(null);
  const list = usePagedList<AuditEntry>("/v1/audit-log", "entries", filters, 50);
  const set = (name: string) => (event: Event) =>
    setDraft({ ...draft, [name]: (event.currentTarget as HTMLInputElement).value });

  if (!isOwner())
    return (
      <>
        <PageTitle title="Audit log">Audit log</PageTitle>
        <p>Only Owners read the audit log.</p>
      </>
    );
  return (
    <>
      <PageTitle title="Audit log">Audit log</PageTitle>
      <form
        class="filters"
        aria-label="Filters"
        onSubmit={(event) => {
          event.preventDefault();
          navigate(to("audit-log", draft));
        }}
      >
        <Field label="Action">
          {(id) => (
            <select id={id} value={draft.action ?? ""} onChange={set("action")}>
              <option value="">Any</option>
              {AUDIT_ACTIONS.map((a) => (
                <option key={a} value={a}>
                  {a}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Done by">
          {(id) => (
            <select id={id} value={draft.actorType ?? ""} onChange={set("actorType")}>
              <option value="">Anyone</option>
              {ACTOR_TYPES.map((t) => (
                <option key={t} value={t}>
                  {t === "key"
                    ? "An API key"
                    : t === "staff"
                      ? "A person on the team"
                      : t === "donor"
                        ? "A donor"
                        : "Almoner"}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="From">
          {(id) => <input id={id} type="date" value={draft.from ?? ""} onInput={set("from")} />}
        </Field>
        <Field label="To">
          {(id) => <input id={id} type="date" value={draft.to ?? ""} onInput={set("to")} />}
        </Field>
        <div class="actions">
          <button type="submit">Filter</button>
          <button
            type="button"
            class="secondary"
            onClick={() =>
              downloadCsv(`/v1/audit-log${query(filters)}`, "audit-log", orgNow().slice(0, 10)).catch(
                (err: unknown) => setError(messageOf(err)),
              )
            }
          >
            Export CSV
          </button>
        </div>
      </form>
      <ErrorNote message={error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">The audit log, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">What</th>
              <th scope="col">Changes</th>
            </tr>
          </thead>
          <tbody>
            {list.items.map((entry) => (
              <tr key={entry.id}>
                <td>{when(entry.createdAt)}</td>
                <td>{actorText(entry.actor)}</td>
                <td>
                  {entry.action}
                  <br />
                  <small>
                    {entry.subject.type} {entry.subject.id}
                  </small>
                </td>
                <td>
                  <pre>{changes(entry)}</pre>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <ListFooter {...list} count={list.items.length} noun="entries" />
    </>
  );
}
