import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import fc from "fast-check";

/**
 * Values generated from the JSON Schemas of the OpenAPI document (the 2020-12 subset it uses): `valid`
 * gives values the schema accepts, `invalid` values it refuses, each with the rule it breaks. The
 * contract fuzzer sends both to the server, so the document and the server are held to each other.
 */

export interface JsonSchema {
  type?: string | string[];
  enum?: unknown[];
  const?: unknown;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  examples?: unknown[];
  format?: string;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  multipleOf?: number;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  readOnly?: boolean;
  description?: string;
  minProperties?: number;
  not?: JsonSchema;
  if?: JsonSchema;
  then?: JsonSchema;
  else?: JsonSchema;
}

const ajv = new Ajv2020({ strict: false, allErrors: true, multipleOfPrecision: 6 });
addFormats.default(ajv);
const validators = new Map<JsonSchema, ValidateFunction>();

/** The schema's validator (compiled once), as a client generated from the document would check. */
export function validatorOf(schema: JsonSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

/** Whether the schema accepts the value. */
export function accepts(schema: JsonSchema, value: unknown): boolean {
  return validatorOf(schema)(value) === true;
}

/** The problems of the last validation, as one line. */
export const validationErrors = (validate: ValidateFunction): string => ajv.errorsText(validate.errors);

/** Rules between the parts of a value, which generation alone does not follow: values are filtered. */
function hasCrossRules(schema: JsonSchema): boolean {
  return (
    schema.if !== undefined ||
    schema.not !== undefined ||
    schema.allOf !== undefined ||
    schema.minProperties !== undefined ||
    (schema.anyOf !== undefined && schema.properties !== undefined)
  );
}

/** Printable text without the characters the server strips (controls, zero-width, bidi marks). */
const textUnit = fc.constantFrom(
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 .,-'&é漢ß".split(""),
);

function typesOf(schema: JsonSchema): string[] {
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

/**
 * A string the schema accepts: mostly its documented examples when it has some (a value that only a rule
 * beyond the schema refuses, such as a time zone the server does not know, is then the exception), else
 * one of its shape.
 */
function stringArb(schema: JsonSchema): fc.Arbitrary<string> {
  const examples = (schema.examples ?? []).filter(
    (e): e is string => typeof e === "string" && accepts(schema, e),
  );
  if (examples.length === 0) return stringOfShape(schema);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...examples) },
    { weight: 1, arbitrary: stringOfShape(schema) },
  );
}

function stringOfShape(schema: JsonSchema): fc.Arbitrary<string> {
  const min = schema.minLength ?? 0;
  const max = Math.min(schema.maxLength ?? Math.max(min, 40), Math.max(min, 60));
  switch (schema.format) {
    case "email":
      return fc
        .tuple(fc.stringMatching(/^[a-z][a-z0-9]{0,11}$/), fc.constantFrom("example.org", "example.com"))
        .map(([local, domain]) => `${local}@${domain}`);
    case "uri":
      return fc
        .stringMatching(/^[a-z]{1,12}$/)
        .map((path) => `https://example.org/${path}`)
        .filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY));
    case "date-time":
      return fc
        .integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) })
        .map((ms) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z"));
    case "date":
      return fc
        .integer({ min: Date.UTC(2000, 0, 1), max: Date.UTC(2099, 11, 31) })
        .map((ms) => new Date(ms).toISOString().slice(0, 10));
    case "uuid":
      return fc.uuid({ version: 4 });
  }
  if (schema.pattern !== undefined) {
    return fc
      .stringMatching(new RegExp(schema.pattern))
      .filter((s) => s.length >= min && s.length <= (schema.maxLength ?? Number.POSITIVE_INFINITY));
  }
  return fc
    .string({ unit: textUnit, minLength: min, maxLength: max })
    .filter((s) => s.trim().length >= Math.min(min, 1) && s.trim() === s);
}

function numberArb(schema: JsonSchema, integer: boolean): fc.Arbitrary<number> {
  const step = schema.multipleOf ?? (integer ? 1 : 0.01);
  let low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + step : -1e6);
  let high = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - step : 1e6);
  low = Math.max(low, -1e12);
  high = Math.min(high, 1e12);
  const lowSteps = Math.ceil(Math.round(low / step / 1e-9) * 1e-9);
  const highSteps = Math.floor(Math.round(high / step / 1e-9) * 1e-9);
  // Bounds are tried more often than the middle: that is where the server and the document part.
  const steps = fc.oneof(
    { weight: 1, arbitrary: fc.constantFrom(lowSteps, highSteps) },
    { weight: 4, arbitrary: fc.integer({ min: lowSteps, max: highSteps }) },
  );
  return steps.map((n) => (step === 1 ? n : Number((n * step).toFixed(4))));
}

/** A value the schema accepts. `depth` keeps recursive or deep schemas small. */
export function valid(schema: JsonSchema, depth = 0): fc.Arbitrary<unknown> {
  const values = generated(schema, depth);
  return hasCrossRules(schema) ? values.filter((v) => accepts(schema, v)) : values;
}

function generated(schema: JsonSchema, depth: number): fc.Arbitrary<unknown> {
  if (schema.const !== undefined) return fc.constant(schema.const);
  if (schema.enum) return fc.constantFrom(...schema.enum);
  const alternatives = schema.properties ? undefined : (schema.anyOf ?? schema.oneOf);
  if (alternatives) return fc.oneof(...alternatives.map((s) => valid(s, depth)));
  const types = typesOf(schema);
  if (types.length === 0) return fc.constantFrom<unknown>("x", 1, true, null);
  return fc.oneof(...types.map((type) => validOfType(schema, type, depth)));
}

function validOfType(schema: JsonSchema, type: string, depth: number): fc.Arbitrary<unknown> {
  switch (type) {
    case "null":
      return fc.constant(null);
    case "boolean":
      return fc.boolean();
    case "integer":
      return numberArb(schema, true);
    case "number":
      return numberArb(schema, false);
    case "string":
      return stringArb(schema);
    case "array": {
      const minLength = schema.minItems ?? 0;
      const maxLength = Math.max(minLength, Math.min(schema.maxItems ?? 3, depth > 2 ? minLength : 3));
      const items = schema.items ? valid(schema.items, depth + 1) : fc.constant("x");
      return schema.uniqueItems
        ? fc.uniqueArray(items, { minLength, maxLength, selector: (v) => JSON.stringify(v) })
        : fc.array(items, { minLength, maxLength });
    }
    case "object": {
      const properties = Object.entries(schema.properties ?? {}).filter(([, s]) => !s.readOnly);
      const required = new Set(schema.required ?? []);
      const model: Record<string, fc.Arbitrary<unknown>> = {};
      for (const [name, s] of properties) model[name] = valid(s, depth + 1);
      return fc.record(model, { requiredKeys: properties.map(([n]) => n).filter((n) => required.has(n)) });
    }
  }
  return fc.constant(null);
}

export interface Invalid {
  value: unknown;
  /** The rule broken, for the failure message. */
  rule: string;
}

const WRONG_TYPE_VALUES: Record<string, unknown> = {
  string: 12345,
  number: "12",
  integer: "12",
  boolean: "yes",
  array: { not: "a list" },
  object: ["not", "an object"],
  null: 0,
};

/**
 * A value the schema refuses, built from a valid one by breaking one rule at one place (the top or a
 * property, an item): a wrong type, a number past a bound, a string too long or off its pattern, a value
 * outside an enum, a missing required or an unknown property. `asText` for a query parameter: only rules
 * that text can break.
 */
export function invalid(
  schema: JsonSchema,
  depth = 0,
  opts: { asText?: boolean } = {},
): fc.Arbitrary<Invalid> | null {
  const options: fc.Arbitrary<Invalid>[] = [];
  const types = typesOf(schema);
  const plain =
    schema.const === undefined && (schema.properties !== undefined || (!schema.anyOf && !schema.oneOf));
  // A query value is text: no value of another JSON type can be sent, only text that breaks a rule.
  if (plain && types.length > 0 && !opts.asText) {
    const wrong = Object.entries(WRONG_TYPE_VALUES).find(
      ([type, value]) =>
        !types.includes(type) &&
        !(type === "integer" && types.includes("number")) &&
        !types.includes(jsonType(value)) &&
        !(jsonType(value) === "integer" && types.includes("number")),
    );
    if (wrong) options.push(fc.constant({ value: wrong[1], rule: `type ${types.join("|")}` }));
  }
  if (schema.enum?.every((v) => typeof v === "string"))
    options.push(fc.constant({ value: "NOT_ONE_OF_THEM", rule: "enum" }));
  if (plain && (types.includes("number") || types.includes("integer"))) {
    if (schema.maximum !== undefined)
      options.push(fc.constant({ value: schema.maximum + 1, rule: `maximum ${schema.maximum}` }));
    if (schema.minimum !== undefined)
      options.push(fc.constant({ value: schema.minimum - 1, rule: `minimum ${schema.minimum}` }));
    if (schema.exclusiveMinimum !== undefined)
      options.push(
        fc.constant({ value: schema.exclusiveMinimum, rule: `exclusiveMinimum ${schema.exclusiveMinimum}` }),
      );
    if (types.includes("integer") && !types.includes("number"))
      options.push(fc.constant({ value: 1.5, rule: "integer" }));
    if (opts.asText) options.push(fc.constant({ value: "twelve", rule: `type ${types.join("|")}` }));
  }
  if (plain && types.includes("string") && !schema.enum) {
    if (schema.maxLength !== undefined)
      options.push(
        fc.constant({ value: "a".repeat(schema.maxLength + 1), rule: `maxLength ${schema.maxLength}` }),
      );
    if (schema.minLength !== undefined && schema.minLength > 0)
      options.push(fc.constant({ value: "", rule: `minLength ${schema.minLength}` }));
    if (schema.pattern !== undefined || schema.format !== undefined) {
      const candidate = "not valid here!";
      if (schema.pattern === undefined || !new RegExp(schema.pattern).test(candidate))
        options.push(
          fc.constant({ value: candidate, rule: `pattern/format ${schema.pattern ?? schema.format}` }),
        );
    }
  }
  if (plain && types.includes("array")) {
    if (schema.maxItems !== undefined && schema.items && depth < 3)
      options.push(
        fc
          .array(valid(schema.items, depth + 1), {
            minLength: schema.maxItems + 1,
            maxLength: schema.maxItems + 1,
          })
          .map((value) => ({ value, rule: `maxItems ${schema.maxItems}` })),
      );
    if (schema.minItems !== undefined && schema.minItems > 0)
      options.push(fc.constant({ value: [], rule: `minItems ${schema.minItems}` }));
    const inner = schema.items && depth < 3 ? invalid(schema.items, depth + 1) : null;
    if (inner && schema.items)
      options.push(
        fc
          .tuple(valid(schema, depth), inner)
          // One item of a valid list replaced, so the list's own length rules still hold.
          .map(([list, bad]) => {
            const items = [...(list as unknown[])];
            items[0] = bad.value;
            return { value: items, rule: `items: ${bad.rule}` };
          }),
      );
  }
  if (plain && types.includes("object") && schema.properties) {
    const base = validOfType(schema, "object", depth) as fc.Arbitrary<Record<string, unknown>>;
    for (const name of schema.required ?? [])
      options.push(
        base.map((v) => {
          const { [name]: _, ...rest } = v;
          return { value: rest, rule: `required ${name}` };
        }),
      );
    if (schema.additionalProperties === false)
      options.push(base.map((v) => ({ value: { ...v, notAField: 1 }, rule: "additionalProperties" })));
    for (const [name, s] of Object.entries(schema.properties)) {
      if (s.readOnly || depth > 3) continue;
      const bad = invalid(s, depth + 1);
      if (bad)
        options.push(
          fc
            .tuple(base, bad)
            .map(([v, b]) => ({ value: { ...v, [name]: b.value }, rule: `${name}: ${b.rule}` })),
        );
    }
  }
  return options.length > 0 ? fc.oneof(...options) : null;
}

function jsonType(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}
