import type { z } from "zod";
import { issuesToDetails } from "../../shared/schemas/common.js";
import { ApiError } from "../errors.js";

/** Parses `input` with a zod schema; every problem becomes one line of a 400's details. */
export function parseWith<S extends z.ZodType>(schema: S, input: unknown): z.output<S> {
  const result = schema.safeParse(input);
  if (!result.success) throw ApiError.validation(issuesToDetails(result.error.issues, input));
  return result.data;
}

/**
 * A request body's text as a JSON object; anything else is a 400 "Invalid JSON body". With
 * `emptyIsObject`, no body at all (or only whitespace) reads as `{}`.
 */
export function parseJsonObject(
  text: string,
  opts: { emptyIsObject?: boolean } = {},
): Record<string, unknown> {
  if (opts.emptyIsObject && text.trim() === "") return {};
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, "Invalid JSON body");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new ApiError(400, "Invalid JSON body");
  const problem = inspectBody(body);
  if (problem) throw ApiError.validation([problem]);
  return body as Record<string, unknown>;
}

const MAX_DEPTH = 32;

/**
 * Refuses what no handler should see: nesting deeper than any real form (so nothing recurses without
 * bound), NUL characters, which PostgreSQL text cannot store, and `__proto__` keys. Iterative, so hostile depth costs nothing.
 */
function inspectBody(body: object): string | undefined {
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: "", depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof value === "string") {
      if (value.includes("\u0000")) return `${path || "body"} must not contain the NUL character (\\u0000)`;
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_DEPTH) return `${path || "body"} is nested too deeply (more than ${MAX_DEPTH} levels)`;
    if (Array.isArray(value)) {
      value.forEach((item, i) => {
        stack.push({ value: item, path: `${path}[${i}]`, depth: depth + 1 });
      });
      continue;
    }
    for (const [key, item] of Object.entries(value)) {
      const here = path ? `${path}.${key}` : key;
      if (key.includes("\u0000")) return `${here} must not contain the NUL character (\\u0000)`;
      // JSON.parse makes "__proto__" an own key; spreading or validating such an object can silently
      // drop it or change prototypes, so it is refused outright (no API field has that name).
      if (key === "__proto__") return `${here} is not a recognised field`;
      stack.push({ value: item, path: here, depth: depth + 1 });
    }
  }
  return undefined;
}
