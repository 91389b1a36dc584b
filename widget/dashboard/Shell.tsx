import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { call, whenSignedOut } from "./api.js";
import type { PageProps } from "./page.js";
import { location, navigate, to } from "./router.js";
import { can, isOwner, loadMe, me } from "./session.js";
import { ErrorNote, messageOf, PageTitle } from "./ui.js";

/**
 * The dashboard's frame: who is signed in, the pages their role may open, and the page the address names.
 * Each page is a chunk of its own, loaded the first time it is opened.
 */

type PageModule = { default: ComponentType<PageProps> };

const PAGES: Record<string, () => Promise<PageModule>> = {
  "": () => import("./pages/Home.js"),
  forms: () => import("./pages/Forms.js"),
  door: () => import("./pages/Door.js"),
  payments: () => import("./pages/Payments.js"),
  recurring: () => import("./pages/Recurring.js"),
  contacts: () => import("./pages/Contacts.js"),
  team: () => import("./pages/Team.js"),
  "audit-log": () => import("./pages/AuditLog.js"),
  developers: () => import("./pages/Developers.js"),
  settings: () => import("./pages/Settings.js"),
  account: () => import("./pages/Account.js"),
  setup: () => import("./pages/Setup.js"),
  reset: () => import("./pages/Setup.js"),
  "sign-in": () => import("./pages/SignIn.js"),
};

/** Pages reached without a session: a set-up or reset link, and signing in. */
const PUBLIC_PAGES = new Set(["setup", "reset", "sign-in"]);

interface NavItem {
  path: string;
  label: string;
  shown: () => boolean;
}

const NAV: NavItem[] = [
  { path: "", label: "Home", shown: () => true },
  { path: "forms", label: "Forms", shown: () => can("forms:read") },
  { path: "door", label: "Door", shown: () => can("tickets:read") },
  { path: "payments", label: "Payments", shown: () => true },
  { path: "recurring", label: "Recurring gifts", shown: () => true },
  { path: "contacts", label: "Contacts", shown: () => true },
  { path: "team", label: "Team", shown: isOwner },
  { path: "audit-log", label: "Audit log", shown: isOwner },
  { path: "settings", label: "Settings", shown: () => can("organization:read") },
  { path: "developers", label: "Developers", shown: isOwner },
  { path: "account", label: "Account", shown: () => true },
];

const loaded = new Map<string, ComponentType<PageProps>>();

function LazyPage(props: { name: string } & PageProps) {
  const [Page, setPage] = useState<ComponentType<PageProps> | undefined>(() => loaded.get(props.name));
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const known = loaded.get(props.name);
    if (known) {
      setPage(() => known);
      return;
    }
    let current = true;
    setPage(undefined);
    const load = PAGES[props.name];
    if (!load) return;
    load()
      .then((module) => {
        loaded.set(props.name, module.default);
        if (current) setPage(() => module.default);
      })
      .catch((err: unknown) => current && setError(messageOf(err)));
    return () => {
      current = false;
    };
  }, [props.name]);
  if (!PAGES[props.name]) return <NotFound />;
  if (error) return <ErrorNote message={`This page could not be loaded: ${error}`} />;
  if (!Page) return <p aria-busy="true">Loading…</p>;
  return <Page rest={props.rest} query={props.query} />;
}

function NotFound() {
  return (
    <>
      <PageTitle title="Page not found">Page not found</PageTitle>
      <p>
        There is no such page. <a href={to("")}>Go to the home page</a>.
      </p>
    </>
  );
}

/**
 * The organization signed in to; for a person on several organizations' staff, a choice that moves the
 * session to another (POST /api/staff/organization) and opens its home page afresh (no page keeps the other
 * organization's data).
 */
function OrganizationName() {
  const person = me.value;
  const [error, setError] = useState<string | null>(null);
  if (!person) return null;
  const organizations = person.organizations ?? [];
  if (organizations.length < 2) return <p class="org">{person.organizationName}</p>;
  const move = async (organizationId: string) => {
    setError(null);
    try {
      await call("POST", "/api/staff/organization", { organizationId });
      window.location.assign(to(""));
    } catch (err) {
      setError(messageOf(err));
    }
  };
  return (
    <p class="org">
      <select
        aria-label="Organization"
        value={person.organizationId}
        onChange={(event) => move(event.currentTarget.value)}
      >
        {organizations.map((org) => (
          <option key={org.id} value={org.id}>
            {org.name}
          </option>
        ))}
      </select>
      {error && <ErrorNote message={error} />}
    </p>
  );
}

export function Shell() {
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    whenSignedOut(() => {
      me.value = null;
    });
    loadMe().catch((err: unknown) => setError(messageOf(err)));
  }, []);

  const { path, query } = location.value;
  const [name = "", ...rest] = path.split("/");
  const person = me.value;

  if (PUBLIC_PAGES.has(name)) {
    return (
      <main id="main" class="narrow">
        <LazyPage name={name} rest={rest.join("/")} query={query} />
      </main>
    );
  }
  if (error) return <ErrorNote message={error} />;
  if (person === undefined) return <p aria-busy="true">Loading…</p>;
  if (person === null)
    return (
      <main id="main" class="narrow">
        <LazyPage name="sign-in" rest="" query={query} />
      </main>
    );

  const signOut = async () => {
    await call("POST", "/api/staff/logout").catch(() => undefined);
    me.value = null;
    navigate(to(""));
  };

  return (
    <div class="layout">
      <a class="skip" href="#main">
        Skip to the page
      </a>
      <header>
        <OrganizationName />
        <nav aria-label="Dashboard">
          <ul>
            {NAV.filter((item) => item.shown()).map((item) => (
              <li key={item.path}>
                <a href={to(item.path)} aria-current={name === item.path ? "page" : undefined}>
                  {item.label}
                </a>
              </li>
            ))}
          </ul>
        </nav>
        <p class="who">
          <span>
            {person.email} · {person.role.charAt(0) + person.role.slice(1).toLowerCase()}
          </span>
          <button type="button" class="link" onClick={signOut}>
            Sign out
          </button>
        </p>
      </header>
      <main id="main">
        {person.twoFactorEnrolmentRequired && name !== "account" ? (
          <>
            <h1>Two-step sign-in is required</h1>
            <p>
              Your organization asks Owners and Finance to use a second step when they sign in.{" "}
              <a href={to("account")}>Set it up on your account page</a> to continue.
            </p>
          </>
        ) : (
          <LazyPage name={name} rest={rest.join("/")} query={query} />
        )}
      </main>
    </div>
  );
}
