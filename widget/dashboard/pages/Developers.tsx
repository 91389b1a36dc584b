import { useEffect, useRef, useState } from "preact/hooks";
import { EVENT_TYPES, PERMISSIONS } from "../../../shared/enums.js";
import { call, detailsAbout, detailsOf, get, listPage } from "../api.js";
import { when } from "../format.js";
import { isOwner } from "../session.js";
import { ConfirmInline, CopyButton, ErrorNote, Field, messageOf, Notice, PageTitle } from "../ui.js";

/**
 * For the organization's developers (Owners): API keys (made with a name and chosen permissions, the secret
 * shown once; listed with their prefix and last use; revoked), and webhooks (made, edited, turned off; their
 * delivery log with each attempt's answer; a delivery sent again; the signing secret rotated, the old one
 * still valid for 24 hours). Secrets are shown once, when made, and never again.
 */

interface Key {
  keyId: string;
  name: string;
  prefix: string;
  permissions: string[];
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
}

interface Webhook {
  webhookId: string;
  url: string;
  events: string[];
  status: "ACTIVE" | "DISABLED";
  description: string;
  lastDeliveryAt: number | null;
  successCount: number;
  failureCount: number;
}

interface LogEntry {
  logId: string;
  deliveryId: string;
  eventType: string;
  status: string;
  httpStatus: number | null;
  attempt: number;
  error: string | null;
  responseBody: string | null;
  timestamp: number;
}

/** What the add and edit forms hold: the webhook's address, its events and its description. */
interface WebhookDraft {
  url: string;
  events: string[];
  description: string;
}

/**
 * A webhook's fields, for adding one and for editing one: its address, its events, its description, each
 * with what the API said was wrong with it.
 */
function WebhookFields(props: {
  draft: WebhookDraft;
  onChange: (draft: WebhookDraft) => void;
  details: string[];
}) {
  const { draft, onChange, details } = props;
  const problems = (field: string, id: string) =>
    detailsAbout(details, field).length > 0 && (
      <div id={id}>
        {detailsAbout(details, field).map((d) => (
          <p key={d} class="error">
            {d}
          </p>
        ))}
      </div>
    );
  const describedBy = (hint: string | undefined, id: string, field: string) =>
    [hint, detailsAbout(details, field).length > 0 ? id : undefined].filter(Boolean).join(" ") || undefined;
  return (
    <>
      <Field label="Address (URL)" hint="Where the events are sent (https)">
        {(id, hint) => (
          <>
            <input
              id={id}
              type="url"
              aria-describedby={describedBy(hint, `${id}-problems`, "url")}
              aria-invalid={detailsAbout(details, "url").length > 0 || undefined}
              required
              value={draft.url}
              onInput={(e) => onChange({ ...draft, url: e.currentTarget.value })}
            />
            {problems("url", `${id}-problems`)}
          </>
        )}
      </Field>
      <fieldset>
        <legend>Events</legend>
        {EVENT_TYPES.map((type) => (
          <label key={type} class="choice">
            <input
              type="checkbox"
              checked={draft.events.includes(type)}
              onChange={(e) =>
                onChange({
                  ...draft,
                  events: e.currentTarget.checked
                    ? [...draft.events, type]
                    : draft.events.filter((x) => x !== type),
                })
              }
            />{" "}
            {type}
          </label>
        ))}
        {detailsAbout(details, "events").map((d) => (
          <p key={d} class="error">
            {d}
          </p>
        ))}
      </fieldset>
      <Field label="Description" hint="What it is for (optional)">
        {(id, hint) => (
          <>
            <input
              id={id}
              aria-describedby={describedBy(hint, `${id}-problems`, "description")}
              aria-invalid={detailsAbout(details, "description").length > 0 || undefined}
              maxLength={500}
              value={draft.description}
              onInput={(e) => onChange({ ...draft, description: e.currentTarget.value })}
            />
            {problems("description", `${id}-problems`)}
          </>
        )}
      </Field>
    </>
  );
}

/** Numbers the secrets shown, for their labels' ids. */
let secretCount = 0;

/** A secret shown once, with a button that copies it. */
function Secret(props: { label: string; value: string }) {
  const labelId = useRef(`secret-${++secretCount}`).current;
  return (
    <div class="confirm" role="status">
      <p>
        <strong id={labelId}>{props.label}</strong> It is shown this once: copy it now.
      </p>
      <p>
        <code data-secret>{props.value}</code>{" "}
        <CopyButton value={props.value} confirm="button" describedBy={labelId} />
      </p>
    </div>
  );
}

export default function Developers() {
  if (!isOwner())
    return (
      <>
        <PageTitle title="Developers">Developers</PageTitle>
        <p>Only Owners manage API keys and webhooks.</p>
      </>
    );
  return (
    <>
      <PageTitle title="Developers">Developers</PageTitle>
      <p>
        The API's reference is at <a href="/docs">/docs</a>.
      </p>
      <Keys />
      <Webhooks />
    </>
  );
}

function Keys() {
  const [keys, setKeys] = useState<Key[]>([]);
  const [name, setName] = useState("");
  const [chosen, setChosen] = useState<string[]>(["forms:read", "donations:read"]);
  const [secret, setSecret] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [revoking, setRevoking] = useState<string | null>(null);
  const load = () =>
    get<{ keys: Key[] }>("/v1/keys")
      .then((body) => setKeys(body.keys))
      .catch((err: unknown) => setError(messageOf(err)));
  useEffect(() => {
    void load();
  }, []);
  const act = async (work: () => Promise<void>) => {
    setError(null);
    try {
      await work();
      await load();
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <section aria-labelledby="keys-title">
      <h2 id="keys-title">API keys</h2>
      {secret && <Secret label="The new key:" value={secret} />}
      <ErrorNote message={error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">API keys</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Key</th>
              <th scope="col">Permissions</th>
              <th scope="col">Last used</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {keys.map((key) => (
              <tr key={key.keyId}>
                <td>
                  <span id={`key-name-${key.keyId}`}>{key.name}</span>
                  <br />
                  <small>Made {when(key.createdAt)}</small>
                </td>
                <td>
                  <code>{key.prefix}…</code>
                </td>
                <td>{key.permissions.join(", ")}</td>
                <td>{key.revokedAt ? `Revoked ${when(key.revokedAt)}` : when(key.lastUsedAt)}</td>
                <td>
                  {!key.revokedAt &&
                    (revoking === key.keyId ? (
                      <ConfirmInline
                        question={`Revoke ${key.name}?`}
                        detail="Programs using it stop working."
                        yes="Yes, revoke"
                        onYes={() =>
                          act(async () => {
                            await call("DELETE", `/v1/keys/${encodeURIComponent(key.keyId)}`);
                            setRevoking(null);
                          })
                        }
                        onKeep={() => setRevoking(null)}
                        trigger={`revoke-${key.keyId}`}
                      />
                    ) : (
                      <button
                        type="button"
                        class="secondary"
                        id={`revoke-${key.keyId}`}
                        aria-describedby={`key-name-${key.keyId}`}
                        onClick={() => setRevoking(key.keyId)}
                      >
                        Revoke…
                      </button>
                    ))}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            const made = await call<Key & { key: string }>("POST", "/v1/keys", { name, permissions: chosen });
            setSecret(made.key);
            setName("");
          });
        }}
      >
        <h3>Make a key</h3>
        <Field label="Key name" hint="What uses it, e.g. Website sync">
          {(id, hint) => (
            <input
              id={id}
              aria-describedby={hint}
              required
              maxLength={100}
              value={name}
              onInput={(e) => setName(e.currentTarget.value)}
            />
          )}
        </Field>
        <fieldset>
          <legend>What it may do</legend>
          {PERMISSIONS.map((p) => (
            <label key={p} class="choice">
              <input
                type="checkbox"
                checked={chosen.includes(p)}
                onChange={(e) =>
                  setChosen(e.currentTarget.checked ? [...chosen, p] : chosen.filter((x) => x !== p))
                }
              />{" "}
              {p}
            </label>
          ))}
        </fieldset>
        <button type="submit">Make the key</button>
      </form>
    </section>
  );
}

const NEW_WEBHOOK: WebhookDraft = { url: "", events: ["donation.created"], description: "" };

function Webhooks() {
  const [hooks, setHooks] = useState<Webhook[]>([]);
  const [draft, setDraft] = useState<WebhookDraft>(NEW_WEBHOOK);
  const [details, setDetails] = useState<string[]>([]);
  const [secret, setSecret] = useState<{ label: string; value: string } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [open, setOpen] = useState<string | null>(null);
  const [editing, setEditing] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<string | null>(null);
  const load = () =>
    get<{ webhooks: Webhook[] }>("/v1/webhooks")
      .then((body) => setHooks(body.webhooks))
      .catch((err: unknown) => setError(messageOf(err)));
  useEffect(() => {
    void load();
  }, []);
  const act = async (work: () => Promise<void>, done?: string) => {
    setError(null);
    setNotice(null);
    setDetails([]);
    try {
      await work();
      if (done) setNotice(done);
      await load();
    } catch (err) {
      setDetails(detailsOf(err));
      setError(messageOf(err));
    }
  };
  return (
    <section aria-labelledby="hooks-title">
      <h2 id="hooks-title">Webhooks</h2>
      {secret && <Secret label={secret.label} value={secret.value} />}
      <Notice message={notice} />
      <ErrorNote message={error} />
      <ul class="plain">
        {hooks.map((hook) => (
          <li key={hook.webhookId} class="hook">
            <p>
              <strong id={`hook-url-${hook.webhookId}`}>{hook.url}</strong> —{" "}
              {hook.status === "ACTIVE" ? "on" : "off"}; {hook.events.join(", ")}
              {hook.description && (
                <>
                  <br />
                  {hook.description}
                </>
              )}
              <br />
              <small>
                {hook.successCount} delivered, {hook.failureCount} failed; last{" "}
                {hook.lastDeliveryAt ? when(hook.lastDeliveryAt) : "never"}
              </small>
            </p>
            <button
              type="button"
              class="secondary"
              aria-describedby={`hook-url-${hook.webhookId}`}
              onClick={() =>
                act(
                  async () => {
                    await call("PUT", `/v1/webhooks/${encodeURIComponent(hook.webhookId)}`, {
                      status: hook.status === "ACTIVE" ? "DISABLED" : "ACTIVE",
                    });
                  },
                  hook.status === "ACTIVE" ? "The webhook is off." : "The webhook is on.",
                )
              }
            >
              {hook.status === "ACTIVE" ? "Turn off" : "Turn on"}
            </button>
            <button
              type="button"
              class="secondary"
              aria-describedby={`hook-url-${hook.webhookId}`}
              onClick={() =>
                act(async () => {
                  const answer = await call<{ secret: string; previousSecretExpiresAt: number }>(
                    "POST",
                    `/v1/webhooks/${encodeURIComponent(hook.webhookId)}/rotate-secret`,
                  );
                  setSecret({
                    label: `The new signing secret (the old one works until ${when(answer.previousSecretExpiresAt)}):`,
                    value: answer.secret,
                  });
                })
              }
            >
              Rotate the signing secret
            </button>
            <button
              type="button"
              class="secondary"
              aria-expanded={open === hook.webhookId}
              aria-describedby={`hook-url-${hook.webhookId}`}
              onClick={() => setOpen(open === hook.webhookId ? null : hook.webhookId)}
            >
              Deliveries
            </button>
            <button
              type="button"
              class="secondary"
              aria-expanded={editing === hook.webhookId}
              aria-describedby={`hook-url-${hook.webhookId}`}
              onClick={() => setEditing(editing === hook.webhookId ? null : hook.webhookId)}
            >
              Edit…
            </button>
            <button
              type="button"
              class="secondary"
              id={`delete-hook-${hook.webhookId}`}
              aria-describedby={`hook-url-${hook.webhookId}`}
              onClick={() => setDeleting(hook.webhookId)}
            >
              Delete…
            </button>
            {deleting === hook.webhookId && (
              <ConfirmInline
                block
                question={`Delete the webhook to ${hook.url}?`}
                detail="Nothing more is sent to it, retries included. This cannot be undone."
                yes="Yes, delete"
                onYes={() =>
                  act(async () => {
                    await call("DELETE", `/v1/webhooks/${encodeURIComponent(hook.webhookId)}`);
                    setDeleting(null);
                    if (editing === hook.webhookId) setEditing(null);
                    if (open === hook.webhookId) setOpen(null);
                  }, `The webhook to ${hook.url} is deleted.`)
                }
                onKeep={() => setDeleting(null)}
                trigger={`delete-hook-${hook.webhookId}`}
              />
            )}
            {editing === hook.webhookId && (
              <WebhookEditor
                hook={hook}
                onSaved={() => {
                  setEditing(null);
                  void act(async () => {}, "The webhook is saved.");
                }}
                onCancel={() => setEditing(null)}
              />
            )}
            {open === hook.webhookId && <Deliveries hook={hook} />}
          </li>
        ))}
      </ul>
      <form
        onSubmit={(e) => {
          e.preventDefault();
          void act(async () => {
            const made = await call<Webhook & { secret: string }>("POST", "/v1/webhooks", {
              url: draft.url,
              events: draft.events,
              ...(draft.description ? { description: draft.description } : {}),
            });
            setSecret({ label: "The webhook's signing secret:", value: made.secret });
            setDraft(NEW_WEBHOOK);
          }, "The webhook is made.");
        }}
      >
        <h3>Add a webhook</h3>
        <WebhookFields draft={draft} onChange={setDraft} details={details} />
        <button type="submit">Add the webhook</button>
      </form>
    </section>
  );
}

/**
 * A webhook's address, events and description changed in place: `PUT /v1/webhooks/{id}` with the fields
 * that changed (audited, as every change through the API); the API's problems are shown at their fields.
 */
function WebhookEditor(props: { hook: Webhook; onSaved: () => void; onCancel: () => void }) {
  const { hook } = props;
  const [draft, setDraft] = useState<WebhookDraft>({
    url: hook.url,
    events: hook.events,
    description: hook.description,
  });
  const [details, setDetails] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const save = async (event: Event) => {
    event.preventDefault();
    setError(null);
    setDetails([]);
    const changed: Partial<WebhookDraft> = {};
    if (draft.url !== hook.url) changed.url = draft.url;
    if (JSON.stringify(draft.events) !== JSON.stringify(hook.events)) changed.events = draft.events;
    if (draft.description !== hook.description) changed.description = draft.description;
    if (Object.keys(changed).length === 0) {
      props.onCancel();
      return;
    }
    setBusy(true);
    try {
      await call("PUT", `/v1/webhooks/${encodeURIComponent(hook.webhookId)}`, changed);
      props.onSaved();
    } catch (err) {
      setDetails(detailsOf(err));
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <form class="hook-edit" aria-label={`Edit the webhook to ${hook.url}`} onSubmit={save}>
      <ErrorNote message={error} />
      <WebhookFields draft={draft} onChange={setDraft} details={details} />
      <button type="submit" disabled={busy}>
        Save the webhook
      </button>{" "}
      <button type="button" class="secondary" onClick={props.onCancel}>
        Cancel
      </button>
    </form>
  );
}

function Deliveries(props: { hook: Webhook }) {
  const [logs, setLogs] = useState<LogEntry[]>([]);
  const [next, setNext] = useState<string | undefined>();
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const load = async (cursor?: string) => {
    try {
      const page = await listPage<LogEntry>(
        "/v1/analytics/webhook-logs",
        "logs",
        { webhookId: props.hook.webhookId, limit: 20 },
        cursor,
      );
      setLogs((old) => (cursor ? [...old, ...page.items] : page.items));
      setNext(page.next);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  // biome-ignore lint/correctness/useExhaustiveDependencies: one log per webhook
  useEffect(() => {
    void load();
  }, [props.hook.webhookId]);
  const resend = async (log: LogEntry) => {
    setError(null);
    try {
      await call(
        "POST",
        `/v1/webhooks/${encodeURIComponent(props.hook.webhookId)}/deliveries/${encodeURIComponent(log.deliveryId)}/resend`,
      );
      setNotice(`${log.eventType} is sent again.`);
      setTimeout(() => void load(), 1500);
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <div class="deliveries">
      <Notice message={notice} />
      <ErrorNote message={error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">Deliveries of {props.hook.url}, newest first</caption>
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Event</th>
              <th scope="col">Result</th>
              <th scope="col">Answer</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {logs.map((log) => (
              <tr key={log.logId}>
                <td id={`delivery-when-${log.logId}`}>{when(log.timestamp)}</td>
                <td>
                  <span id={`delivery-event-${log.logId}`}>{log.eventType}</span>
                  <br />
                  <small>attempt {log.attempt}</small>
                </td>
                <td>
                  {log.status}
                  {log.httpStatus ? ` (${log.httpStatus})` : ""}
                  {log.error ? `: ${log.error}` : ""}
                </td>
                <td>
                  <pre>{log.responseBody ?? ""}</pre>
                </td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    aria-describedby={`delivery-event-${log.logId} delivery-when-${log.logId}`}
                    onClick={() => resend(log)}
                  >
                    Send again
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {logs.length === 0 && <p>No deliveries yet.</p>}
      {next && (
        <button type="button" class="secondary" onClick={() => load(next)}>
          Show more deliveries
        </button>
      )}
    </div>
  );
}
