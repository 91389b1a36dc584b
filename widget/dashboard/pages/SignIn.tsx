import { useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, call } from "../api.js";
import type { PageProps } from "../page.js";
import { location, navigate, to } from "../router.js";
import { type Me, me } from "../session.js";
import { ErrorNote, Field, messageOf, Notice, PageTitle } from "../ui.js";

/**
 * Signing in: e-mail and password, then the code of the authenticator app when the person has turned two-step
 * sign-in on (a recovery code works too). "Forgot your password" mails a reset link. With `invitation` (a
 * set-up link's token, for a person who already has a password) the sign-in accepts the invitation and
 * opens the inviting organization.
 */
export default function SignIn(props: Partial<PageProps> & { invitation?: string; email?: string }) {
  const invitation = props.invitation;
  const [email, setEmail] = useState(props.email ?? "");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [needsCode, setNeedsCode] = useState(false);
  const [forgot, setForgot] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const codeInput = useRef<HTMLInputElement>(null);
  // The code's field appears after the password is taken: the focus moves into it, so a screen reader reads
  // its label and the person types the code at once (autofocus acts only when a page loads).
  useEffect(() => {
    if (needsCode) codeInput.current?.focus();
  }, [needsCode]);

  const signIn = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const person = await call<Me>("POST", "/api/staff/login", {
        email,
        password,
        ...(needsCode && code ? { code: code.replace(/\s+/g, "") } : {}),
        ...(invitation ? { invitation } : {}),
      });
      me.value = person;
      // An invitation's token leaves the address (and the history) once it is used.
      if (location.value.path === "sign-in" || invitation) navigate(to(""), { replace: true });
    } catch (err) {
      if (err instanceof ApiFailure && err.body.twoFactorRequired === true) {
        setNeedsCode(true);
        setError(needsCode ? messageOf(err) : null);
      } else setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  const requestReset = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await call("POST", "/api/staff/password-reset", { email });
      setNotice(
        "If that address belongs to someone on a team here, a link to set a new password is on its way. It works once, for 30 minutes.",
      );
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  if (forgot)
    return (
      <>
        <PageTitle title="Reset your password">Reset your password</PageTitle>
        <form onSubmit={requestReset}>
          <Field label="E-mail address">
            {(id) => (
              <input
                id={id}
                type="email"
                autoComplete="username"
                required
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
              />
            )}
          </Field>
          <ErrorNote message={error} />
          <Notice message={notice} />
          <button type="submit" disabled={busy}>
            Send me a link
          </button>
          <button type="button" class="link" onClick={() => setForgot(false)}>
            Back to sign-in
          </button>
        </form>
      </>
    );

  return (
    <>
      <PageTitle title="Sign in">
        {invitation ? "Sign in to accept the invitation" : "Sign in to your organization's dashboard"}
      </PageTitle>
      {invitation && (
        <p>
          This address already has a password here. Sign in with it, and with your code if you use one, to
          join the organization that invited you.
        </p>
      )}
      <form onSubmit={signIn}>
        <Field label="E-mail address">
          {(id) => (
            <input
              id={id}
              type="email"
              autoComplete="username"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="Password">
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
        {needsCode && (
          <Field label="Code from your authenticator app" hint="Or one of your recovery codes.">
            {(id, hint) => (
              <input
                id={id}
                aria-describedby={hint}
                inputMode="numeric"
                autoComplete="one-time-code"
                required
                value={code}
                ref={codeInput}
                onInput={(e) => setCode(e.currentTarget.value)}
              />
            )}
          </Field>
        )}
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        <button type="button" class="link" onClick={() => setForgot(true)}>
          Forgot your password?
        </button>
      </form>
    </>
  );
}
