import type { AnyTrx, Migration } from "./shared.js";

/**
 * A membership keeps the address as the organization's Owner typed it when inviting the person, shown in the
 * team list until they join: a person's own spelling, set when their account was made (perhaps by another
 * organization), would tell an Owner who invites "ANN@…" that "Ann@…" already has an account. Memberships
 * made before it have none and show the person's own spelling, as they did.
 */
export const invitedEmail: Migration = {
  version: 29,
  name: "a membership's address as its invitation spelled it",
  async up(trx: AnyTrx) {
    await trx.schema.alterTable("staff_memberships").addColumn("invited_email", "text").execute();
  },
};
