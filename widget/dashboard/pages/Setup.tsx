import { useEffect, useRef, useState } from "preact/hooks";
import { ApiFailure, call } from "../api.js";
import type { PageProps } from "../page.js";
import { navigate, to } from "../router.js";
import { type Me, me } from "../session.js";
import { ErrorNote, Field, messageOf, PageTitle } from "../ui.js";
import SignIn from "./SignIn.js";

export const MIN_PASSWORD_LENGTH = 12;

/** Whose a set-up or reset link is (POST /api/staff/link). */
interface StaffLink {
  email: string;
  organizationName: string;
  signInRequired: boolean;
}

/**
 * A set-up link (`/dashboard/setup?token=…`, from the command line or an invitation) or a reset link
 * (`/dashboard/reset?token=…`, mailed): the person chooses a password and is signed in. A set-up link of
 * a person who already has a password sets none: they sign in with theirs, which accepts the invitation.
 * A reset of a person with two-step sign-in on also takes the code of their authenticator app (or a
 * recovery code), asked for once the server says so, as signing in does.
 */
export default function Setup(props: PageProps) {
  const reset = window.location.pathname.endsWith("/reset");
  const token = props.query.get("token") ?? "";
  const [password, setPassword] = useState("");
  const [again, setAgain] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [signInInstead, setSignInInstead] = useState(false);
  const [code, setCode] = useState("");
  const [needsCode, setNeedsCode] = useState(false);
  // A code the server refused (wrong or used): said at the code's field.
  const [codeError, setCodeError] = useState<string | null>(null);
  const codeInput = useRef<HTMLInputElement>(null);
  // The code's field appears because the person was asked for it: it takes focus.
  useEffect(() => {
    if (needsCode) codeInput.current?.focus();
  }, [needsCode]);
  const title = reset ? "Choose a new password" : "Set up your account";
  // Whose the link is, asked before anything is typed: a link used or expired says so at once, and a
  // person opening someone else's link sees whose account it sets.
  const [link, setLink] = useState<StaffLink | null>(null);
  const [dead, setDead] = useState<string | null>(null);
  useEffect(() => {
    if (!token) return;
    call<StaffLink>("POST", "/api/staff/link", { token, kind: reset ? "reset" : "setup" })
      .then(setLink)
      .catch((err: unknown) => setDead(messageOf(err)));
  }, [token, reset]);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (password.length < MIN_PASSWORD_LENGTH) {
      setError(`The password needs at least ${MIN_PASSWORD_LENGTH} characters.`);
      return;
    }
    if (password !== again) {
      setError("The two passwords are not the same.");
      return;
    }
    setBusy(true);
    setError(null);
    setCodeError(null);
    try {
      me.value = await call<Me>("POST", reset ? "/api/staff/password-reset/complete" : "/api/staff/setup", {
        token,
        password,
        ...(reset && needsCode && code.trim() ? { code: code.replace(/\s+/g, "") } : {}),
      });
      // The token leaves the address (and the history) once it is used.
      navigate(to(""), { replace: true });
    } catch (err) {
      if (!reset && err instanceof ApiFailure && err.body.signInRequired === true) setSignInInstead(true);
      else if (reset && err instanceof ApiFailure && err.body.twoFactorRequired === true) {
        // Asked for a code (the link still works): the field appears. Asked again: the code was refused.
        setNeedsCode(true);
        setCodeError(needsCode ? messageOf(err) : null);
      } else setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  if (!token)
    return (
      <>
        <PageTitle title={title}>{title}</PageTitle>
        <p>
          This page is opened from a link you were sent. <a href={to("")}>Sign in</a> if you already have a
          password.
        </p>
      </>
    );

  if (dead)
    return (
      <>
        <PageTitle title={title}>{title}</PageTitle>
        <ErrorNote message={dead} />
        <p>
          <a href={to("")}>Sign in</a>
          {reset ? ", or ask for a new link there." : " if you already have a password."}
        </p>
      </>
    );
  if (!link)
    return (
      <>
        <PageTitle title={title}>{title}</PageTitle>
        <p aria-busy="true">Loading…</p>
      </>
    );
  if (signInInstead || link.signInRequired) return <SignIn invitation={token} email={link.email} />;

  return (
    <>
      <PageTitle title={title}>{title}</PageTitle>
      <p class="link-for">
        For <strong>{link.email}</strong> at <strong>{link.organizationName}</strong>. Not you? Close this
        page: the link is someone else's.
      </p>
      <form onSubmit={submit}>
        <Field
          label="Password"
          hint={`At least ${MIN_PASSWORD_LENGTH} characters; a passphrase of a few words is easy to remember.`}
        >
          {(id, hint) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              aria-describedby={hint}
              required
              minLength={MIN_PASSWORD_LENGTH}
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          )}
        </Field>
        <Field label="The same password again">
          {(id) => (
            <input
              id={id}
              type="password"
              autoComplete="new-password"
              required
              value={again}
              onInput={(e) => setAgain(e.currentTarget.value)}
            />
          )}
        </Field>
        {needsCode && (
          <Field label="Code from your authenticator app" hint="Or one of your recovery codes.">
            {(id, hint) => (
              <>
                <input
                  id={id}
                  ref={codeInput}
                  aria-describedby={[hint, codeError ? `${id}-error` : undefined].filter(Boolean).join(" ")}
                  aria-invalid={codeError ? true : undefined}
                  autoComplete="one-time-code"
                  autoCapitalize="off"
                  spellcheck={false}
                  required
                  value={code}
                  onInput={(e) => setCode(e.currentTarget.value)}
                />
                {codeError && (
                  <p id={`${id}-error`} class="error" role="alert">
                    {codeError}
                  </p>
                )}
              </>
            )}
          </Field>
        )}
        <ErrorNote message={error} />
        <button type="submit" disabled={busy}>
          {reset ? "Save and sign in" : "Set password and sign in"}
        </button>
      </form>
    </>
  );
}
