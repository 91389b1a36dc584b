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
 * `emptyIsObject`, no body at all (or only whitespace) reads as `{}`. A body too deep or with a
 * `__proto__` key is a 400 at once; the paths of fields holding NUL characters come back as `nulPaths`,
 * which the caller reports together with the schema's own problems (every problem at once) and never
 * hands to a handler.
 */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * A request body's bytes as text: UTF-8, as JSON must be (RFC 8259). Bytes that are not UTF-8 are the 400 of
 * a body that cannot be parsed, never text with U+FFFD in place of what was sent.
 */
export function utf8Text(bytes: ArrayBuffer): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    throw new ApiError(400, "Invalid JSON body");
  }
}

export function parseJsonObject(
  text: string,
  opts: { emptyIsObject?: boolean } = {},
): { body: Record<string, unknown>; nulPaths: string[] } {
  if (opts.emptyIsObject && text.trim() === "") return { body: {}, nulPaths: [] };
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new ApiError(400, "Invalid JSON body");
  }
  if (body === null || typeof body !== "object" || Array.isArray(body))
    throw new ApiError(400, "Invalid JSON body");
  const { refusal, nulPaths } = inspectBody(body);
  if (refusal) throw ApiError.validation([refusal, ...nulPaths.map(nulDetail)]);
  return { body: body as Record<string, unknown>, nulPaths };
}

/** The 400's line for a field holding a NUL character. */
function nulDetail(path: string): string {
  return `${path} must not contain the NUL character (\\u0000)`;
}

/**
 * Parses a body with its schema; with NUL characters found in it, a 400 naming them and every other
 * problem the schema finds (its lines about those same fields left out), whatever the schema thinks of them.
 */
export function parseBodyWith<S extends z.ZodType>(
  schema: S,
  body: unknown,
  nulPaths: string[],
): z.output<S> {
  if (nulPaths.length === 0) return parseWith(schema, body);
  const result = schema.safeParse(body);
  const others = result.success
    ? []
    : issuesToDetails(result.error.issues, body).filter(
        (line) => !nulPaths.some((f) => line.startsWith(`${f} `)),
      );
  throw ApiError.validation([...nulPaths.map(nulDetail), ...others]);
}

/** Half of a UTF-16 surrogate pair without its other half (`"\ud800"` in JSON): no character at all. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function loneSurrogate(path: string): string {
  return `${path} must be Unicode text: it holds half of a surrogate pair (a \\uD800–\\uDFFF escape without its other half)`;
}

const MAX_DEPTH = 32;
/** As the schema's details: at most this many NUL lines. */
const MAX_NUL_PATHS = 50;

/**
 * Refuses what no handler should see: nesting deeper than any real form (so nothing recurses without
 * bound) and `__proto__` keys (`refusal`, the first found), and NUL characters, which PostgreSQL text
 * cannot store (`nulPaths`, the path of every field holding one). Iterative, so hostile depth costs nothing.
 */
function inspectBody(body: object): { refusal?: string; nulPaths: string[] } {
  const nulPaths: string[] = [];
  const nul = (path: string) => {
    if (nulPaths.length < MAX_NUL_PATHS) nulPaths.push(path);
  };
  const stack: { value: unknown; path: string; depth: number }[] = [{ value: body, path: "", depth: 0 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (typeof value === "string") {
      if (value.includes("\u0000")) nul(path || "body");
      if (LONE_SURROGATE.test(value)) return { refusal: loneSurrogate(path || "body"), nulPaths };
      continue;
    }
    if (value === null || typeof value !== "object") continue;
    if (depth >= MAX_DEPTH)
      return {
        refusal: `${path || "body"} is nested too deeply (more than ${MAX_DEPTH} levels)`,
        nulPaths,
      };
    if (Array.isArray(value)) {
      // Pushed last first, so that the problems are listed in the body's order.
      for (let i = value.length - 1; i >= 0; i--)
        stack.push({ value: value[i], path: `${path}[${i}]`, depth: depth + 1 });
      continue;
    }
    const entries = Object.entries(value);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, item] = entries[i];
      const here = path ? `${path}.${key}` : key;
      // JSON.parse makes "__proto__" an own key; spreading or validating such an object can silently
      // drop it or change prototypes, so it is refused outright (no API field has that name).
      if (key === "__proto__") return { refusal: `${here} is not a recognised field`, nulPaths };
      if (key.includes("\u0000")) nul(here);
      if (LONE_SURROGATE.test(key)) return { refusal: loneSurrogate(here), nulPaths };
      stack.push({ value: item, path: here, depth: depth + 1 });
    }
  }
  return { nulPaths };
}
