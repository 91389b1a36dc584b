import type { Context } from "hono";
import type { z } from "zod";
import { emailKey } from "../../shared/email.js";
import {
  teamInviteBodySchema,
  teamListSchema,
  teamMemberParamsSchema,
  teamMemberSchema,
  teamRoleBodySchema,
} from "../../shared/schemas/staffTeam.js";
import { ApiError } from "../errors.js";
import { countAgainstLimit } from "../overLimit.js";
import { StaffError, type StaffSession } from "../staff/accounts.js";
import { changeRole, inviteMember, listTeam, removeMember, TeamError } from "../staff/team.js";
import type { AuditActor } from "../store/auditLog.js";
import type { AppDeps, AppEnv } from "./env.js";
import { checkOwnOrigin } from "./requestSource.js";
import { defineRoute, errorSchema, type RouteSpec } from "./route.js";
import { noKey } from "./staff.js";
import { staffSessionOf } from "./staffSession.js";

/**
 * The Team page's endpoints, for Owners signed in to the dashboard: the members, invitations (a set-up
 * link mailed to the person), a change of role and a removal. A session only (never an API key); a
 * change only from this instance's own pages (Origin). The last Owner can be neither demoted nor removed.
 */

const e = (description: string) => ({ description, schema: errorSchema });

/** The signed-in Owner as the audit log names them. */
const staffActor = (session: StaffSession): AuditActor => ({
  type: "staff",
  userId: session.userId,
  email: session.email,
});
const tags = ["Staff team"];
const NOT_SIGNED_IN = e("Not signed in, or the session has ended");
const NOT_OWNER = e(
  "Not an Owner; sent with an API key; or (a change) not sent from this instance's own pages",
);

function refusal(error: unknown): never {
  if (error instanceof TeamError) throw new ApiError(error.kind === "notFound" ? 404 : 409, error.message);
  if (error instanceof StaffError && error.kind === "member") throw new ApiError(409, error.message);
  throw error;
}

/**
 * Invitations mailed at most per organization and per address an hour (429 past them): each one mails a
 * link from the organization to any address, which must not become a way to flood a mailbox.
 */
const INVITES_PER_ORGANIZATION_PER_HOUR = 50;
const INVITES_PER_ADDRESS_PER_HOUR = 5;

export function staffTeamRoutes(deps: AppDeps): RouteSpec[] {
  const reading = (c: Context<AppEnv>) => noKey(c);
  const changing = (c: Context<AppEnv>) => {
    noKey(c);
    checkOwnOrigin(c, deps.config);
  };
  /** One more invitation counted under `key`; a 429 past `max` an hour. */
  const invitesLeft = (key: string, max: number, what: string) =>
    countAgainstLimit(deps, key, max, `Too many invitations ${what}; try again later`);
  /** The signed-in Owner of the request, with the role their membership has now. */
  const owner = async (c: Context<AppEnv>): Promise<StaffSession> => {
    const session = await staffSessionOf(c, deps);
    if (!session) throw new ApiError(401, "Not signed in, or the session has ended: sign in again");
    if (session.role !== "OWNER") throw new ApiError(403, "Only an Owner may manage the team");
    // An Owner's session that may do nothing yet (the organization requires two-factor sign-in and they
    // have not set it up) reaches the team no more than /v1.
    if (!session.permissions.has("organization:write"))
      throw new ApiError(
        403,
        "This session may not manage the team yet: your organization requires two-factor sign-in, set it up first",
      );
    return session;
  };
  const noStore = { "Cache-Control": "no-store" };

  return [
    defineRoute({
      method: "get",
      path: "/api/staff/team",
      operationId: "staffListTeam",
      auth: false,
      session: "staff",
      tags,
      summary: "The organization's members (Owner)",
      description:
        "Every member of the signed-in Owner's organization, oldest first: role, when they joined, whether they have set a password (an invitation is pending until they do), and their latest sign-in.",
      before: reading,
      responses: {
        200: { description: "The members", schema: teamListSchema },
        401: NOT_SIGNED_IN,
        403: NOT_OWNER,
      },
      handler: async (c) => {
        const session = await owner(c);
        const body: z.infer<typeof teamListSchema> = {
          members: await listTeam(deps.store.db, session.organizationId),
        };
        return c.json(body, 200, noStore);
      },
    }),
    defineRoute({
      method: "post",
      path: "/api/staff/invites",
      operationId: "staffInvite",
      auth: false,
      session: "staff",
      idempotent: false,
      tags,
      summary: "Invite a person to the team (Owner)",
      description: `Mails the address a single-use set-up link (24 hours) to set a password, from the organization, with the inviting Owner's address to reply to. Inviting again a person who has not set a password yet mails a fresh link (the earlier ones stop working) and gives them the role sent. The link is never in the answer. At most ${INVITES_PER_ORGANIZATION_PER_HOUR} invitations per organization and ${INVITES_PER_ADDRESS_PER_HOUR} per address an hour (429 with Retry-After).`,
      body: teamInviteBodySchema,
      before: changing,
      responses: {
        201: { description: "Invited: the member, as the team list shows them", schema: teamMemberSchema },
        400: e("Validation failed"),
        401: NOT_SIGNED_IN,
        403: NOT_OWNER,
        409: e("The address is already a member who has set a password; or re-inviting would leave no Owner"),
        429: e("Too many invitations (see Retry-After)"),
      },
      handler: async (c, { body }) => {
        const session = await owner(c);
        const org = session.organizationId;
        await invitesLeft(
          `staff-invite-org:${org}`,
          INVITES_PER_ORGANIZATION_PER_HOUR,
          "from this organization",
        );
        await invitesLeft(
          `staff-invite-email:${org}:${emailKey(body.email)}`,
          INVITES_PER_ADDRESS_PER_HOUR,
          "to this e-mail address",
        );
        const member = await inviteMember(deps.store, {
          organizationId: session.organizationId,
          email: body.email,
          role: body.role,
          invitedBy: session.email,
          publicUrl: deps.config.publicUrl,
          nowMs: deps.now(),
          actor: staffActor(session),
        }).catch(refusal);
        return c.json(member satisfies z.infer<typeof teamMemberSchema>, 201, noStore);
      },
    }),
    defineRoute({
      method: "patch",
      path: "/api/staff/team/{userId}",
      operationId: "staffChangeRole",
      auth: false,
      session: "staff",
      idempotent: false,
      tags,
      summary: "Change a member's role (Owner)",
      description:
        "A change of role ends the member's sessions in this organization (they sign in again, with the new role). The last Owner cannot be given another role.",
      params: teamMemberParamsSchema,
      body: teamRoleBodySchema,
      before: changing,
      responses: {
        200: { description: "The member with their new role", schema: teamMemberSchema },
        400: e("Validation failed"),
        401: NOT_SIGNED_IN,
        403: NOT_OWNER,
        404: e("No such member of this organization"),
        409: e("The member is the organization's last Owner"),
      },
      handler: async (c, { params, body }) => {
        const session = await owner(c);
        const member = await changeRole(deps.store, {
          organizationId: session.organizationId,
          userId: params.userId,
          role: body.role,
          nowMs: deps.now(),
          actor: staffActor(session),
        }).catch(refusal);
        return c.json(member satisfies z.infer<typeof teamMemberSchema>, 200, noStore);
      },
    }),
    defineRoute({
      method: "delete",
      path: "/api/staff/team/{userId}",
      operationId: "staffRemoveMember",
      auth: false,
      session: "staff",
      tags,
      summary: "Remove a member from the organization (Owner)",
      description:
        "Their sessions in this organization end at once, and an unused set-up link stops working. The last Owner cannot be removed.",
      params: teamMemberParamsSchema,
      before: changing,
      responses: {
        204: { description: "Removed" },
        401: NOT_SIGNED_IN,
        403: NOT_OWNER,
        404: e("No such member of this organization"),
        409: e("The member is the organization's last Owner"),
      },
      handler: async (c, { params }) => {
        const session = await owner(c);
        await removeMember(deps.store, {
          organizationId: session.organizationId,
          userId: params.userId,
          nowMs: deps.now(),
          actor: staffActor(session),
        }).catch(refusal);
        return c.body(null, 204);
      },
    }),
  ];
}
