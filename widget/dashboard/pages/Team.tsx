import { useEffect, useRef, useState } from "preact/hooks";
import { call, get } from "../api.js";
import { when } from "../format.js";
import { isOwner, me, type Role } from "../session.js";
import { ConfirmInline, ErrorNote, Field, messageOf, Notice, PageTitle } from "../ui.js";

/**
 * The team (Owners): who is in the organization and with which role; invite someone (a set-up link is mailed
 * to them), change a role, remove a person. The last Owner can be neither demoted nor removed.
 */

interface Member {
  userId: string;
  email: string;
  role: Role;
  joinedAt: string;
  passwordSet: boolean;
  invitePending: boolean;
  inviteExpiresAt: string | null;
  lastSignInAt: string | null;
}

const ROLES: { value: Role; label: string; description: string }[] = [
  { value: "OWNER", label: "Owner", description: "Everything, the team and the API keys" },
  {
    value: "FINANCE",
    label: "Finance",
    description: "Payments, refunds, recurring gifts, contacts, exports and reports",
  },
  { value: "STAFF", label: "Staff", description: "Forms and contacts; sees payments and recurring gifts" },
];
const roleName = (role: Role): string => ROLES.find((r) => r.value === role)?.label ?? role;

export default function Team() {
  const [members, setMembers] = useState<Member[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [notice, setNotice] = useState<string | null>(null);
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("STAFF");
  const [removing, setRemoving] = useState<string | null>(null);
  const [inviting, setInviting] = useState(false);

  const load = () =>
    get<{ members: Member[] }>("/api/staff/team")
      .then((body) => setMembers(body.members))
      .catch((err: unknown) => setError(messageOf(err)));
  useEffect(() => {
    if (isOwner()) void load();
  }, []);

  /** Whether `work` was done (a refusal is shown, and false). */
  const act = async (work: () => Promise<unknown>, done: string): Promise<boolean> => {
    setError(null);
    setNotice(null);
    try {
      await work();
    } catch (err) {
      setError(messageOf(err));
      return false;
    }
    setNotice(done);
    await load();
    return true;
  };

  // The API refuses to remove or demote the organization's last Owner, or the last one who has joined while
  // others are only invited: the page offers neither and says why.
  const owners = (members ?? []).filter((m) => m.role === "OWNER");
  const joinedOwners = owners.filter((m) => !m.invitePending);
  const lastOwner = (m: Member): boolean =>
    m.role === "OWNER" && (owners.length === 1 || (!m.invitePending && joinedOwners.length === 1));

  if (!isOwner())
    return (
      <>
        <PageTitle title="Team">Team</PageTitle>
        <p>Only Owners manage the team.</p>
      </>
    );

  return (
    <>
      <PageTitle title="Team">Team</PageTitle>
      <Notice message={notice} />
      <ErrorNote message={error} />
      <div class="table-wrap">
        <table>
          <caption class="visually-hidden">The organization's team</caption>
          <thead>
            <tr>
              <th scope="col">Person</th>
              <th scope="col">Role</th>
              <th scope="col">Last sign-in</th>
              <th scope="col">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(members ?? []).map((member) => (
              <tr key={member.userId}>
                <td>
                  <span id={`member-${member.userId}`}>{member.email}</span>
                  {member.userId === me.value?.userId && " (you)"}
                  {member.invitePending && (
                    <>
                      <br />
                      <small>Invited; the link works until {when(member.inviteExpiresAt)}</small>
                    </>
                  )}
                </td>
                <td>
                  <RoleChange
                    member={member}
                    locked={lastOwner(member)}
                    onChange={(next) =>
                      act(
                        () =>
                          call("PATCH", `/api/staff/team/${encodeURIComponent(member.userId)}`, {
                            role: next,
                          }),
                        `${member.email} is now ${roleName(next)}.`,
                      )
                    }
                  />
                </td>
                <td>{when(member.lastSignInAt)}</td>
                <td>
                  {removing === member.userId ? (
                    <ConfirmInline
                      question={`Remove ${member.email}?`}
                      yes="Yes, remove"
                      onYes={() =>
                        act(
                          () => call("DELETE", `/api/staff/team/${encodeURIComponent(member.userId)}`),
                          `${member.email} is removed.`,
                        ).then(() => setRemoving(null))
                      }
                      onKeep={() => setRemoving(null)}
                      trigger={`remove-${member.userId}`}
                    />
                  ) : lastOwner(member) ? (
                    <small id={`only-owner-${member.userId}`}>
                      The only Owner: make someone else Owner before removing or changing this one.
                    </small>
                  ) : (
                    <>
                      {member.invitePending && (
                        <button
                          type="button"
                          class="secondary"
                          aria-describedby={`member-${member.userId}`}
                          onClick={() =>
                            act(
                              () =>
                                call("POST", "/api/staff/invites", {
                                  email: member.email,
                                  role: member.role,
                                }),
                              `A fresh link is on its way to ${member.email}.`,
                            )
                          }
                        >
                          Send the link again
                        </button>
                      )}
                      <button
                        type="button"
                        class="secondary"
                        id={`remove-${member.userId}`}
                        aria-describedby={`member-${member.userId}`}
                        onClick={() => setRemoving(member.userId)}
                      >
                        Remove…
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <section aria-labelledby="invite-title">
        <h2 id="invite-title">Invite someone</h2>
        <form
          onSubmit={async (event) => {
            event.preventDefault();
            if (inviting) return;
            setInviting(true);
            const sent = await act(
              () => call("POST", "/api/staff/invites", { email, role }),
              `An invitation is on its way to ${email}. The link works once, for 24 hours.`,
            );
            setInviting(false);
            // A refused invitation (a mistyped address, too many to one address) keeps the address to correct.
            if (sent) setEmail("");
          }}
        >
          <Field label="E-mail address">
            {(id) => (
              <input
                id={id}
                type="email"
                required
                value={email}
                onInput={(e) => setEmail(e.currentTarget.value)}
              />
            )}
          </Field>
          <fieldset>
            <legend>Role</legend>
            {ROLES.map((r) => (
              <label key={r.value} class="choice">
                <input
                  type="radio"
                  name="invite-role"
                  value={r.value}
                  checked={role === r.value}
                  onChange={() => setRole(r.value)}
                />{" "}
                <strong>{r.label}</strong> — {r.description}
              </label>
            ))}
          </fieldset>
          <button type="submit" disabled={inviting}>
            Send the invitation
          </button>
        </form>
      </section>
    </>
  );
}

/**
 * A member's role: the list only chooses it; "Change role" sends it (a keyboard moving through the list
 * changes nothing). Demoting an Owner, or changing one's own role, asks first.
 */
function RoleChange(props: {
  member: Member;
  /** The last Owner: the role cannot change (the row says why). */
  locked: boolean;
  onChange: (role: Role) => Promise<unknown>;
}) {
  const { member } = props;
  const [chosen, setChosen] = useState<Role>(member.role);
  const [confirming, setConfirming] = useState(false);
  const [busy, setBusy] = useState(false);
  // Once the role is changed (here or by another Owner), the list shows it again.
  const shown = useRef(member.role);
  useEffect(() => {
    if (shown.current === member.role) return;
    shown.current = member.role;
    setChosen(member.role);
    setConfirming(false);
  }, [member.role]);
  const self = member.userId === me.value?.userId;
  const risky = self || (member.role === "OWNER" && chosen !== "OWNER");
  const send = async () => {
    setBusy(true);
    try {
      await props.onChange(chosen);
    } finally {
      setBusy(false);
      setConfirming(false);
    }
  };
  const selectId = `role-${member.userId}`;
  return (
    <>
      <label class="visually-hidden" for={selectId}>
        Role of {member.email}
      </label>
      <select
        id={selectId}
        value={chosen}
        disabled={busy || props.locked}
        aria-describedby={props.locked ? `only-owner-${member.userId}` : undefined}
        onChange={(event) => {
          setChosen(event.currentTarget.value as Role);
          setConfirming(false);
        }}
      >
        {ROLES.map((r) => (
          <option key={r.value} value={r.value}>
            {r.label}
          </option>
        ))}
      </select>{" "}
      {confirming ? (
        <ConfirmInline
          question={
            self
              ? `Change your own role to ${roleName(chosen)}?`
              : `Make ${member.email} ${roleName(chosen)} instead of Owner?`
          }
          yes={`Yes, make ${self ? "me" : "them"} ${roleName(chosen)}`}
          onYes={send}
          onKeep={() => setConfirming(false)}
          busy={busy}
          trigger={`role-change-${member.userId}`}
        />
      ) : (
        <button
          type="button"
          class="secondary"
          id={`role-change-${member.userId}`}
          aria-label={`Change role of ${member.email}`}
          disabled={busy || chosen === member.role}
          onClick={() => (risky ? setConfirming(true) : void send())}
        >
          Change role
        </button>
      )}
    </>
  );
}
