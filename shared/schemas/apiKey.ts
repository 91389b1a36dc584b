import { z } from "zod";
import { PERMISSIONS } from "../enums.js";
import { requiredString } from "./common.js";

/** API keys as the organization manages them over /v1/keys: made, listed, revoked; the secret shown once. */

const permission = z.enum(PERMISSIONS);

export const apiKeySchema = z.object({
  keyId: z.string().meta({ description: "`key_…`" }),
  name: z.string().meta({ description: "What the key is for, as its creator named it (may be empty)" }),
  prefix: z
    .string()
    .meta({ description: "The key's first 12 characters (`cs_live_…`/`cs_test_…`), to recognise it by" }),
  permissions: z.array(permission),
  createdAt: z.string().meta({ description: "ISO 8601" }),
  lastUsedAt: z.string().nullable().meta({
    description:
      "The key's latest request, to the minute (a use is noted at most once a minute); null when never used",
  }),
  revokedAt: z.string().nullable().meta({ description: "When it was revoked; null while it works" }),
});
export type ApiKeyOut = z.output<typeof apiKeySchema>;

export const apiKeyListSchema = z.object({
  keys: z.array(apiKeySchema).meta({ description: "Oldest first, revoked keys included" }),
});

export const apiKeyCreateSchema = z.strictObject({
  name: requiredString(100).meta({ description: "What the key is for" }),
  permissions: z
    .array(permission)
    .min(1)
    .refine((list) => new Set(list).size === list.length, { message: "must not repeat a permission" })
    .meta({ uniqueItems: true, description: `Any of ${PERMISSIONS.join(", ")}` }),
});

export const apiKeyCreatedSchema = apiKeySchema.extend({
  key: z.string().meta({ description: "The secret (`cs_live_…`): shown only this once, never again" }),
});
