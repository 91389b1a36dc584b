import { useEffect, useState } from "preact/hooks";
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
  const [enrolment, setEnrolment] = useState<{ secret: string; uri: string } | null>(null);
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
        <div class="confirm">
          <p>
            <strong>Two-step sign-in is on.</strong> Keep these recovery codes somewhere safe: each signs you
            in once if you lose your authenticator app. They are not shown again.
          </p>
          <ul class="codes" aria-label="Recovery codes">
            {recoveryCodes.map((c) => (
              <li key={c}>{c}</li>
            ))}
          </ul>
        </div>
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
                  await call<{ secret: string; uri: string }>("POST", "/api/staff/two-factor/enrolment"),
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
            In your authenticator app, add an account with this key (or open the link on the phone that has
            the app):
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
