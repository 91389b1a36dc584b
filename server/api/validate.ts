import type { Context } from "hono";
import type { z } from "zod";
import { issuesToDetails } from "../../shared/schemas/common.js";
import { ApiError } from "../errors.js";

/** Parses `input` with a zod schema; every problem becomes one line of a 400's details. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw ApiError.validation(issuesToDetails(result.error.issues, input));
  return result.data;
}

/** The request's JSON body; anything but a JSON object is the contract's "Invalid JSON body". */
export async function readJsonObject(c: Context): Promise<Record<string, unknown>> {
  const text = await c.req.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, "Invalid JSON body");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new ApiError(400, "Invalid JSON body");
  return body as Record<string, unknown>;
}

export function queryObject(c: Context): Record<string, string> {
  return c.req.query();
}
