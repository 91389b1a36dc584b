import { openStore } from "../../server/store/database.js";
import { insertForm } from "../../server/store/forms.js";
import { createApiKey } from "../../server/store/keys.js";
import { createOrganization } from "../../server/store/organizations.js";
import { formSchema } from "../../shared/schemas/form.js";

/** Creates the benchmark's organization, API key and forms directly through the store, then closes it. */

export interface Seeded {
  organizationId: string;
  apiKey: string;
  /** Every form id, in insertion order (oldest first). */
  formIds: string[];
  seedSeconds: number;
}

export async function seedDatabase(
  databaseUrl: string,
  formCount: number,
  opts: { pgSchema?: string } = {},
): Promise<Seeded> {
  const started = performance.now();
  const store = await openStore(databaseUrl, opts);
  try {
    const org = await createOrganization(store.db, { name: "Bench", sandbox: true }, Date.now());
    const { key } = await createApiKey(
      store.db,
      { organizationId: org.id, sandbox: org.sandbox },
      Date.now(),
    );
    const schema = formSchema({ allowHttpImages: true });
    // Distinct creation times one second apart, oldest first, ending a little before now.
    const base = Date.now() - (formCount + 60) * 1000;
    const formIds: string[] = [];
    const batch = 1000;
    for (let start = 0; start < formCount; start += batch) {
      await store.db.transaction().execute(async (trx) => {
        for (let i = start; i < Math.min(formCount, start + batch); i++) {
          const config = schema.parse({
            title: `Bench form ${String(i + 1).padStart(5, "0")}`,
            funds: ["General"],
          });
          const form = await insertForm(trx, org.id, config, new Date(base + i * 1000).toISOString());
          formIds.push(form.id);
        }
      });
    }
    return {
      organizationId: org.id,
      apiKey: key,
      formIds,
      seedSeconds: (performance.now() - started) / 1000,
    };
  } finally {
    await store.close();
  }
}
