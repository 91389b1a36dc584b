/** Typed reads of a parsed Stripe request, with Stripe's validation errors (param names in bracket notation). */

import { invalidParam, invalidRequest, missingParam } from "./errors.js";
import type { FormParams, FormValue } from "./form.js";

export class Params {
  constructor(
    readonly raw: FormParams,
    private readonly prefix = "",
  ) {}

  name(key: string): string {
    return this.prefix ? `${this.prefix}[${key}]` : key;
  }

  has(key: string): boolean {
    return this.raw[key] !== undefined;
  }

  private value(key: string): FormValue | undefined {
    return this.raw[key];
  }

  /** A string, `undefined` when absent. An empty string is Stripe's "unset" and comes back as "". */
  str(key: string): string | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (typeof v !== "string") throw invalidParam(this.name(key), `Invalid string: ${JSON.stringify(v)}`);
    return v;
  }

  /** Absent → undefined, "" → null, otherwise the string. */
  strOrNull(key: string): string | null | undefined {
    const v = this.str(key);
    if (v === undefined) return undefined;
    return v === "" ? null : v;
  }

  reqStr(key: string): string {
    const v = this.str(key);
    if (v === undefined || v === "") throw missingParam(this.name(key));
    return v;
  }

  int(key: string): number | undefined {
    const v = this.str(key);
    if (v === undefined || v === "") return undefined;
    if (!/^-?\d+$/.test(v))
      throw invalidRequest(`Invalid integer: ${v}`, {
        param: this.name(key),
        code: "parameter_invalid_integer",
      });
    return Number(v);
  }

  positiveInt(key: string): number | undefined {
    const v = this.int(key);
    if (v !== undefined && v < 1)
      throw invalidRequest("This value must be greater than or equal to 1.", {
        param: this.name(key),
        code: "parameter_invalid_integer",
      });
    return v;
  }

  bool(key: string): boolean | undefined {
    const v = this.str(key);
    if (v === undefined || v === "") return undefined;
    if (v === "true") return true;
    if (v === "false") return false;
    throw invalidRequest(`Invalid boolean: ${v}`, {
      param: this.name(key),
      code: "parameter_invalid_boolean",
    });
  }

  oneOf<const T extends string>(key: string, allowed: readonly T[]): T | undefined {
    const v = this.str(key);
    if (v === undefined || v === "") return undefined;
    if (!(allowed as readonly string[]).includes(v))
      throw invalidParam(this.name(key), `Invalid ${this.name(key)}: must be one of ${allowed.join(", ")}`);
    return v as T;
  }

  obj(key: string): Params | undefined {
    const v = this.value(key);
    if (v === undefined || v === "") return undefined;
    if (typeof v === "string" || Array.isArray(v))
      throw invalidParam(this.name(key), `Invalid object: ${this.name(key)} must be a hash`);
    return new Params(v, this.name(key));
  }

  list(key: string): string[] | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (v === "") return [];
    if (typeof v === "string") return [v];
    if (!Array.isArray(v))
      throw invalidParam(this.name(key), `Invalid array: ${this.name(key)} must be an array`);
    return v.map((item) => {
      if (typeof item !== "string") throw invalidParam(this.name(key), "Invalid array of strings");
      return item;
    });
  }

  /** Stripe metadata: absent → undefined, "" → null (clear all), otherwise key/value strings ("" deletes a key). */
  metadata(key = "metadata"): Record<string, string> | null | undefined {
    const v = this.value(key);
    if (v === undefined) return undefined;
    if (v === "") return null;
    if (typeof v === "string" || Array.isArray(v))
      throw invalidParam(this.name(key), "Invalid hash: metadata must be a hash of string keys and values");
    const out: Record<string, string> = {};
    for (const [k, val] of Object.entries(v)) {
      if (typeof val !== "string")
        throw invalidParam(`${this.name(key)}[${k}]`, "Metadata values must be strings");
      if (k.length > 40)
        throw invalidParam(`${this.name(key)}[${k}]`, "Metadata keys can be at most 40 characters");
      if (val.length > 500)
        throw invalidParam(`${this.name(key)}[${k}]`, "Metadata values can be at most 500 characters");
      out[k] = val;
    }
    if (Object.keys(out).length > 50) throw invalidParam(this.name(key), "Metadata can have at most 50 keys");
    return out;
  }

  /** The `expand` list (`expand[]=a` or `expand[0]=a`). */
  expand(): string[] {
    return this.list("expand") ?? [];
  }
}

/** Applies a metadata update the way Stripe does: merge, "" value deletes a key, "" metadata clears. */
export function mergeMetadata(
  current: Record<string, string>,
  update: Record<string, string> | null | undefined,
): Record<string, string> {
  if (update === undefined) return current;
  if (update === null) return {};
  const next = { ...current };
  for (const [k, v] of Object.entries(update)) {
    if (v === "") delete next[k];
    else next[k] = v;
  }
  return next;
}
