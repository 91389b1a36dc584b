import type { ComponentChildren } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import { call, get } from "../api.js";
import { when } from "../format.js";
import { loadMe, me } from "../session.js";
import { ErrorNote, Field, messageOf, Notice, PageTitle } from "../ui.js";
import { MIN_PASSWORD_LENGTH } from "./Setup.js";

/** The signed-in person's account: their password, two-step sign-in, and the sessions signed in as them. */

interface SessionRow {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  userAgent: string | null;
  clientIp: string | null;
  current: boolean;
}

export default function Account() {
  return (
    <>
      <PageTitle title="Account">Your account</PageTitle>
      <p>Signed in as {me.value?.email}.</p>
      <TwoFactor />
      {/* Until a required second step is set up, the session reaches nothing else. */}
      {!me.value?.twoFactorEnrolmentRequired && (
        <>
          <Password />
          <Sessions />
        </>
      )}
    </>
  );
}

function Password() {
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  return (
    <section aria-labelledby="password-title">
      <h2 id="password-title">Password</h2>
      <form
        onSubmit={async (event) => {
          event.preventDefault();
          setError(null);
          setNotice(null);
          try {
            await call("POST", "/api/staff/password", { currentPassword: current, newPassword: next });
            setNotice("Your password is changed; your other sessions are signed out.");
            setCurrent("");
            setNext("");
          } catch (err) {
            setError(messageOf(err));
          }
        }}
      >
        <Field label="Current password">
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="current-password"
              required
              value={current}
              onInput={(e) => setCurrent(e.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="New password" hint={`At least ${MIN_PASSWORD_LENGTH} characters.`}>
          {(id, hint) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              aria-describedby={hint}
              required
              minLength={MIN_PASSWORD_LENGTH}
              value={next}
              onInput={(e) => setNext(e.currentTarget.value)}
            />
          )}
        </Field>
        <ErrorNote message={error} />
        <Notice message={notice} />
        <button type="submit">Change the password</button>
      </form>
    </section>
  );
}

function TwoFactor() {
  const on = me.value?.twoFactorEnabled === true;
  const [enrolment, setEnrolment] = useState<{ secret: string; uri: string; qrCode: string } | null>(null);
  const [code, setCode] = useState("");
  const [password, setPassword] = useState("");
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const attempt = async (work: () => Promise<void>) => {
    setError(null);
    try {
      await work();
    } catch (err) {
      setError(messageOf(err));
    }
  };

  return (
    <section aria-labelledby="tfa-title">
      <h2 id="tfa-title">Two-step sign-in</h2>
      {recoveryCodes && (
        <RecoveryCodeList codes={recoveryCodes} label="Recovery codes">
          <strong>Two-step sign-in is on.</strong> Keep these recovery codes somewhere safe: each signs you in
          once if you lose your authenticator app. They are not shown again.
        </RecoveryCodeList>
      )}
      {on && !recoveryCodes && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void attempt(async () => {
              await call("POST", "/api/staff/two-factor/disable", { password });
              setPassword("");
              await loadMe();
            });
          }}
        >
          <p>Two-step sign-in is on: signing in asks for a code from your authenticator app.</p>
          <Field label="Your password, to turn it off">
            {(id) => (
              <input
                id={id}
                type="password"
                autoComplete="current-password"
                required
                value={password}
                onInput={(e) => setPassword(e.currentTarget.value)}
              />
            )}
          </Field>
          <button type="submit" class="danger">
            Turn two-step sign-in off
          </button>
        </form>
      )}
      {!on && !enrolment && (
        <>
          <p>Add a second step to signing in: a code from an authenticator app on your phone.</p>
          <button
            type="button"
            onClick={() =>
              attempt(async () =>
                setEnrolment(
                  await call<{ secret: string; uri: string; qrCode: string }>(
                    "POST",
                    "/api/staff/two-factor/enrolment",
                  ),
                ),
              )
            }
          >
            Set up two-step sign-in
          </button>
        </>
      )}
      {!on && enrolment && (
        <form
          onSubmit={(event) => {
            event.preventDefault();
            void attempt(async () => {
              const answer = await call<{ recoveryCodes: string[] }>(
                "POST",
                "/api/staff/two-factor/confirm",
                {
                  code: code.replace(/\s+/g, ""),
                },
              );
              setRecoveryCodes(answer.recoveryCodes);
              setEnrolment(null);
              await loadMe();
            });
          }}
        >
          <p>
            In your authenticator app, add an account by scanning this QR code, or by typing the key below it
            (or open the link on the phone that has the app):
          </p>
          <p>
            <img
              class="qr"
              src={`data:image/svg+xml;charset=utf-8,${encodeURIComponent(enrolment.qrCode)}`}
              alt="QR code of the key, for your authenticator app's camera"
              width={200}
              height={200}
            />
          </p>
          <p>
            <code class="secret" data-secret>
              {enrolment.secret}
            </code>
          </p>
          <p>
            <a href={enrolment.uri}>Open in the authenticator app</a>
          </p>
          <Field label="The 6-digit code the app shows">
            {(id) => (
              <input
                id={id}
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                value={code}
                onInput={(e) => setCode(e.currentTarget.value)}
              />
            )}
          </Field>
          <button type="submit">Turn it on</button>
        </form>
      )}
      <ErrorNote message={error} />
      {on && !recoveryCodes && <RecoveryCodes />}
    </section>
  );
}

/**
 * Recovery codes as they are shown the once the server answers them (on turning two-step sign-in on, and on
 * asking for new ones): what to do with them (`children`), then the list, named by `label`.
 */
function RecoveryCodeList(props: {
  codes: string[];
  label: string;
  children: ComponentChildren;
  /** The box takes focus when it appears (the form that asked for it is gone). */
  focus?: boolean;
}) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (props.focus) box.current?.focus();
  }, [props.focus]);
  return (
    <div class="confirm" ref={box} tabIndex={props.focus ? -1 : undefined}>
      <p>{props.children}</p>
      <ul class="codes" aria-label={props.label}>
        {props.codes.map((c) => (
          <li key={c}>{c}</li>
        ))}
      </ul>
    </div>
  );
}

/** At or below this many recovery codes left, the page says to get new ones. */
const FEW_RECOVERY_CODES = 3;

/**
 * With two-step sign-in on: how many recovery codes are left (`GET /api/staff/two-factor`), and ten new
 * ones in place of them all, proven with the password (`POST /api/staff/two-factor/recovery-codes`).
 */
function RecoveryCodes() {
  const [left, setLeft] = useState<number | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [password, setPassword] = useState("");
  // A refusal (a wrong password: the server's words): said at the password's field.
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const pending = useRef(false);
  const [codes, setCodes] = useState<string[] | null>(null);
  const load = () =>
    get<{ recoveryCodesLeft: number }>("/api/staff/two-factor")
      .then((body) => setLeft(body.recoveryCodesLeft))
      .catch((err: unknown) => setLoadError(messageOf(err)));
  useEffect(() => {
    void load();
  }, []);

  const renew = async (event: Event) => {
    event.preventDefault();
    if (pending.current) return;
    pending.current = true;
    setBusy(true);
    setError(null);
    try {
      const answer = await call<{ recoveryCodes: string[] }>("POST", "/api/staff/two-factor/recovery-codes", {
        password,
      });
      setPassword("");
      setCodes(answer.recoveryCodes);
      setLeft(answer.recoveryCodes.length);
      void load();
    } catch (err) {
      setError(messageOf(err));
    } finally {
      pending.current = false;
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="recovery-title">
      <h3 id="recovery-title">Recovery codes</h3>
      <ErrorNote message={loadError} />
      {left !== null && (
        <p>
          {left === 1 ? "1 recovery code left." : `${left} recovery codes left.`}{" "}
          {left === 0 ? (
            <strong class="warning">
              You have none left: if you lose your authenticator app you cannot sign in. Get new ones now.
            </strong>
          ) : (
            left <= FEW_RECOVERY_CODES && (
              <strong class="warning">Few are left: get new ones before they run out.</strong>
            )
          )}
        </p>
      )}
      {codes ? (
        <>
          <RecoveryCodeList codes={codes} label="New recovery codes" focus>
            <strong>These are your new recovery codes; the old ones no longer work.</strong> Keep them
            somewhere safe: each signs you in once if you lose your authenticator app. They are not shown
            again.
          </RecoveryCodeList>
          <button type="button" class="secondary" onClick={() => setCodes(null)}>
            I have kept them
          </button>
        </>
      ) : (
        <form onSubmit={renew} aria-busy={busy || undefined}>
          <Field
            label="Your password, to get new recovery codes"
            hint="Ten new codes replace all of your current ones, used or not: those stop working."
          >
            {(id, hint) => (
              <>
                <input
                  id={id}
                  type="password"
                  autoComplete="current-password"
                  aria-describedby={[hint, error ? `${id}-error` : undefined].filter(Boolean).join(" ")}
                  aria-invalid={error ? true : undefined}
                  required
                  value={password}
                  onInput={(e) => setPassword(e.currentTarget.value)}
                />
                {error && (
                  <p id={`${id}-error`} class="error" role="alert">
                    {error}
                  </p>
                )}
              </>
            )}
          </Field>
          <button type="submit" disabled={busy}>
            New recovery codes
          </button>
        </form>
      )}
    </section>
  );
}

function Sessions() {
  const [sessions, setSessions] = useState<SessionRow[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const load = () =>
    get<{ sessions: SessionRow[] }>("/api/staff/sessions")
      .then((body) => setSessions(body.sessions))
      .catch((err: unknown) => setError(messageOf(err)));
  useEffect(() => {
    void load();
  }, []);
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Where you are signed in</h2>
      <ErrorNote message={error} />
      <ul class="plain">
        {(sessions ?? []).map((s) => (
          <li key={s.id}>
            {s.userAgent ?? "A browser"}
            {s.clientIp ? ` (${s.clientIp})` : ""}, signed in {when(s.createdAt)}, last used{" "}
            {when(s.lastSeenAt)}
            {s.current ? (
              " — this session"
            ) : (
              <button
                type="button"
                class="secondary"
                onClick={() =>
                  call("DELETE", `/api/staff/sessions/${encodeURIComponent(s.id)}`)
                    .then(load)
                    .catch((err: unknown) => setError(messageOf(err)))
                }
              >
                Sign out this session
              </button>
            )}
          </li>
        ))}
      </ul>
    </section>
  );
}
