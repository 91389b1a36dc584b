import { z } from "zod";
import {
  assignGlobalInputIds,
  GLOBAL_INPUT_TYPES,
  organizationUpdateSchema,
} from "../../shared/schemas/organization.js";
import { ApiError } from "../errors.js";
import { uuid } from "../ids.js";
import { getOrganization, type Organization, updateOrganization } from "../store/organizations.js";
import type { AppDeps } from "./env.js";
import { defineRoute, type RouteSpec, standardErrors } from "./route.js";

export const organizationSchema = z.object({
  organizationName: z.string(),
  organizationBaseURLs: z.array(z.string()),
  globalCustomInputs: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      inputType: z.enum(GLOBAL_INPUT_TYPES),
      required: z.boolean(),
      options: z.array(z.string()),
    }),
  ),
});

export function presentOrganization(org: Organization): z.infer<typeof organizationSchema> {
  return {
    organizationName: org.name,
    organizationBaseURLs: org.baseUrls,
    globalCustomInputs: org.globalCustomInputs,
  };
}

/** The organization of the authenticated key; a key whose organization is gone is no longer valid. */
export async function loadCallerOrganization(deps: AppDeps, organizationId: string): Promise<Organization> {
  const org = await getOrganization(deps.store.db, organizationId);
  if (!org) throw new ApiError(401, "Invalid API key");
  return org;
}

export function organizationRoutes(deps: AppDeps): RouteSpec[] {
  const load = (id: string) => loadCallerOrganization(deps, id);
  return [
    defineRoute({
      method: "get",
      path: "/v1/organization",
      permission: "organization:read",
      tags: ["Organization"],
      summary: "Get the organization's configuration",
      responses: { 200: { description: "The configuration", schema: organizationSchema }, ...standardErrors },
      handler: async (c) => c.json(presentOrganization(await load(c.get("auth").organizationId))),
    }),
    defineRoute({
      method: "put",
      path: "/v1/organization",
      permission: "organization:write",
      tags: ["Organization"],
      summary: "Change the organization's name, base URLs or global custom inputs",
      description:
        "Only the fields sent change. `organizationBaseURLs` are absolute http(s) URLs without query; the first is used for overlay links. `globalCustomInputs` replaces the list; an input keeps its id when sent with it, or when its title matches an existing input.",
      body: organizationUpdateSchema,
      responses: {
        200: { description: "The new configuration", schema: organizationSchema },
        ...standardErrors,
      },
      handler: async (c, { body }) => {
        const org = await load(c.get("auth").organizationId);
        const updated = await updateOrganization(deps.store.db, org.id, {
          name: body.organizationName,
          baseUrls: body.organizationBaseURLs,
          globalCustomInputs: body.globalCustomInputs
            ? assignGlobalInputIds(body.globalCustomInputs, org.globalCustomInputs, uuid)
            : undefined,
        });
        return c.json(presentOrganization(updated ?? org));
      },
    }),
  ];
}
