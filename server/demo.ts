import { formSchema } from "../shared/schemas/form.js";
import { isoAt } from "../shared/time.js";
import type { Config } from "./config.js";
import { issueSetupLink } from "./staff/team.js";
import type { Db, Store } from "./store/database.js";
import { holdSchemaLock } from "./store/dialect.js";
import { insertForm } from "./store/forms.js";
import { createApiKey } from "./store/keys.js";
import { countOrganizations, createOrganization } from "./store/organizations.js";

/** The demo organization a newcomer can try at once: one form of each kind. */
const DEMO_FORMS: Record<string, unknown>[] = [
  {
    title: "Support our work",
    description: "Every gift keeps our programs running. Give once or every month.",
    funds: ["General Fund", "Scholarships"],
    frequencies: ["ONE_TIME", "MONTHLY", "ANNUALLY"],
    annuallyAmounts: [100, 250, 500],
    enableFundraisingBar: true,
    goal: 50000,
    enableDonorList: true,
    customInputs: [{ title: "In honor of", inputType: "short_text" }],
    faqs: [{ question: "Is my gift tax-deductible?", answer: "Yes, to the extent allowed by law." }],
  },
  {
    title: "Giving circles",
    description: "Join a giving circle.",
    amountType: "giving_level",
    funds: ["General Fund"],
    frequencies: ["ONE_TIME", "MONTHLY"],
    givingLevels: [
      { title: "Friend", amount: 50, description: "Covers a week of supplies" },
      { title: "Champion", amount: 250, description: "Funds a workshop" },
      { title: "Benefactor", amount: 1000, description: "Sponsors a student for a term" },
    ],
  },
  {
    title: "Sponsor the spring fair",
    description: "Choose a sponsorship package.",
    amountType: "sponsorship",
    funds: ["Spring Fair"],
    sponsorshipGroups: [
      {
        groupTitle: "Booths",
        description: "Your name on a booth",
        options: [
          { optionTitle: "Bronze booth", amount: 250, quantity: 20 },
          { optionTitle: "Gold booth", amount: 1000, quantity: 5 },
        ],
      },
    ],
  },
  {
    title: "Annual gala",
    description: "An evening of dinner and music.",
    formType: "event",
    funds: ["Gala"],
    enableTimeAndLocation: true,
    eventDate: "2027-05-15",
    startTime: "18:30",
    endTime: "22:00",
    location: "Riverside Hall, 12 Main Street",
    timeZone: "America/New_York",
    tickets: [
      { name: "General admission", price: 75, quantity: 200, maxPerOrder: 10 },
      { name: "Table for eight", price: 500, ticketType: "GROUP", groupSize: 8, quantity: 20 },
    ],
    promoCodes: [
      {
        code: "EARLYBIRD",
        discountType: "percentage",
        discountValue: 20,
        applicableTickets: ["General admission"],
      },
    ],
  },
];

/** What the Developers page calls the key `npm start` prints. */
export const DEMO_KEY_NAME = "Demo key";

export interface DemoResult {
  organizationId: string;
  apiKey: string;
  forms: { id: string; title: string; url: string }[];
}

/**
 * Creates the demo organization when the database has no organization at all; otherwise does nothing.
 * `now` is the app's clock (AppDeps.now): the organization and its key are dated by it, and the forms a
 * millisecond apart from then, in list order.
 */
export async function seedDemoIfEmpty(
  db: Db,
  config: Config,
  now: () => number,
): Promise<DemoResult | undefined> {
  if ((await countOrganizations(db)) > 0) return undefined;
  const schema = formSchema({ allowHttpImages: !config.production });
  return db.transaction().execute(async (trx: Db) => {
    // Instances started at once on a fresh PostgreSQL database take turns here (SQLite's write transaction
    // is alone already), so the second sees the first's demo and makes none.
    await holdSchemaLock(trx, "almoner_demo");
    if ((await countOrganizations(trx)) > 0) return undefined;
    const startMs = now();
    const org = await createOrganization(trx, { name: "Demo Organization", sandbox: true }, startMs);
    const { key } = await createApiKey(
      trx,
      { organizationId: org.id, sandbox: true, name: DEMO_KEY_NAME },
      startMs,
    );
    const forms: DemoResult["forms"] = [];
    for (const [i, input] of DEMO_FORMS.entries()) {
      const form = await insertForm(trx, org.id, schema.parse(input), isoAt(startMs + i));
      const path = form.config.formType === "EVENT" ? "attend" : "donate";
      forms.push({ id: form.id, title: form.config.title, url: `${config.publicUrl}/${path}/${form.id}` });
    }
    return { organizationId: org.id, apiKey: key, forms };
  });
}

/** The demo organization's Owner, who signs in to the dashboard with the set-up link `npm start` prints. */
export const DEMO_OWNER_EMAIL = "owner@demo.almoner.test";

export type DemoOwner =
  | { email: string; organizationId: string; setupUrl: string; expiresAt: string }
  | { email: string; organizationId: string; passwordSet: true };

/**
 * The demo Owner and, until they have set a password, a fresh set-up link (the earlier ones stop
 * working): made in the demo organization when it was just created (`createdOrganizationId`), found
 * again on later starts. Undefined when there is no demo Owner (a database from before them, or one
 * removed from the team).
 */
export async function demoOwner(
  store: Store,
  config: Config,
  now: () => number,
  createdOrganizationId?: string,
): Promise<DemoOwner | undefined> {
  const found = await store.db
    .selectFrom("staff_users as u")
    .innerJoin("staff_memberships as m", "m.user_id", "u.id")
    .select((eb) => ["m.organization_id", eb("u.password_hash", "is not", null).as("password_set")])
    .where("u.email_key", "=", DEMO_OWNER_EMAIL)
    .where("m.role", "=", "OWNER")
    .orderBy("m.created_at")
    .executeTakeFirst();
  const organizationId = found?.organization_id ?? createdOrganizationId;
  if (!organizationId) return undefined;
  if (found?.password_set) return { email: DEMO_OWNER_EMAIL, organizationId, passwordSet: true };
  const link = await issueSetupLink(store, {
    organizationId,
    email: DEMO_OWNER_EMAIL,
    role: "OWNER",
    publicUrl: config.publicUrl,
    nowMs: now(),
  });
  return { email: DEMO_OWNER_EMAIL, organizationId, setupUrl: link.setupUrl, expiresAt: link.expiresAt };
}
