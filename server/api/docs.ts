import { escapeHtml } from "../../shared/html.js";

/**
 * A readable API reference built from the OpenAPI document, as one self-contained page (no CDN, no
 * script), so it works offline.
 */

type Json = Record<string, unknown>;

const esc = (v: unknown) => escapeHtml(String(v ?? ""));

function resolve(doc: Json, schema: Json | undefined): Json | undefined {
  const ref = schema?.$ref;
  if (typeof ref !== "string") return schema;
  const name = ref.split("/").pop() as string;
  return ((doc.components as Json)?.schemas as Json)?.[name] as Json | undefined;
}

function typeLabel(doc: Json, raw: Json | undefined): string {
  const schema = resolve(doc, raw);
  if (!schema) return "any";
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as Json[]).map((s) => typeLabel(doc, s)).join(" | ");
  if (Array.isArray(schema.enum)) return (schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(" | ");
  if (schema.type === "array") return `array of ${typeLabel(doc, schema.items as Json)}`;
  if (Array.isArray(schema.type)) return (schema.type as string[]).join(" | ");
  if (typeof schema.type === "string") return schema.type;
  return "any";
}

function describeRange(schema: Json): string {
  const parts: string[] = [];
  if (schema.minLength !== undefined) parts.push(`min length ${schema.minLength}`);
  if (schema.maxLength !== undefined) parts.push(`max length ${schema.maxLength}`);
  if (schema.minimum !== undefined) parts.push(`≥ ${schema.minimum}`);
  if (schema.exclusiveMinimum !== undefined) parts.push(`> ${schema.exclusiveMinimum}`);
  if (schema.maximum !== undefined) parts.push(`≤ ${schema.maximum}`);
  if (schema.minItems !== undefined) parts.push(`at least ${schema.minItems} items`);
  if (schema.maxItems !== undefined) parts.push(`at most ${schema.maxItems} items`);
  if (schema.pattern !== undefined) parts.push(`pattern <code>${esc(schema.pattern)}</code>`);
  if (schema.default !== undefined) parts.push(`default <code>${esc(JSON.stringify(schema.default))}</code>`);
  return parts.join(", ");
}

function fieldsTable(doc: Json, raw: Json | undefined, depth = 0): string {
  const schema = resolve(doc, raw);
  const props = schema?.properties as Record<string, Json> | undefined;
  if (!schema || !props) return "";
  const required = new Set((schema.required as string[]) ?? []);
  const rows = Object.entries(props)
    .map(([name, prop]) => {
      const p = resolve(doc, prop) ?? {};
      const inner = p.type === "array" ? resolve(doc, p.items as Json) : p;
      const nested =
        depth < 2 && inner?.properties
          ? `<details><summary>fields</summary>${fieldsTable(doc, inner, depth + 1)}</details>`
          : "";
      return `<tr><td><code>${esc(name)}</code>${required.has(name) ? ' <span class="req">required</span>' : ""}</td><td>${esc(typeLabel(doc, prop))}</td><td>${p.description ? esc(p.description) : ""} ${describeRange(p)}${nested}</td></tr>`;
    })
    .join("");
  return `<table><thead><tr><th>Field</th><th>Type</th><th>Notes</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function renderDocsPage(doc: Json): string {
  const info = doc.info as Json;
  const paths = doc.paths as Record<string, Record<string, Json>>;
  const byTag = new Map<string, string[]>();
  const toc: string[] = [];
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = ((op.tags as string[]) ?? ["Other"])[0];
      const anchor = `${method}-${path}`.replace(/[^A-Za-z0-9]+/g, "-");
      const params = ((op.parameters as Json[]) ?? [])
        .map(
          (p) =>
            `<tr><td><code>${esc(p.name)}</code> <small>(${esc(p.in)})</small>${p.required ? ' <span class="req">required</span>' : ""}</td><td>${esc(typeLabel(doc, p.schema as Json))}</td><td>${esc(p.description ?? (p.schema as Json)?.description ?? "")}</td></tr>`,
        )
        .join("");
      const body = (((op.requestBody as Json)?.content as Json)?.["application/json"] as Json)?.schema as
        | Json
        | undefined;
      const responses = Object.entries((op.responses as Record<string, Json>) ?? {})
        .map(([status, res]) => {
          const schema = ((res.content as Json)?.["application/json"] as Json)?.schema as Json | undefined;
          const fields =
            schema && status.startsWith("2")
              ? `<details><summary>fields</summary>${fieldsTable(doc, schema)}</details>`
              : "";
          return `<li><code>${esc(status)}</code> ${esc(res.description)}${fields}</li>`;
        })
        .join("");
      const section = `<section id="${anchor}"><h3><span class="m ${method}">${method.toUpperCase()}</span> <code>${esc(path)}</code></h3>
<p><strong>${esc(op.summary)}</strong></p>${op.description ? `<p>${esc(op.description)}</p>` : ""}
${params ? `<h4>Parameters</h4><table><thead><tr><th>Name</th><th>Type</th><th>Notes</th></tr></thead><tbody>${params}</tbody></table>` : ""}
${body ? `<h4>Request body (JSON)</h4>${fieldsTable(doc, body)}` : ""}
<h4>Responses</h4><ul>${responses}</ul></section>`;
      if (!byTag.has(tag)) byTag.set(tag, []);
      byTag.get(tag)?.push(section);
      toc.push(
        `<li><a href="#${anchor}"><span class="m ${method}">${method.toUpperCase()}</span> ${esc(path)}</a></li>`,
      );
    }
  }
  const sections = [...byTag.entries()]
    .map(([tag, items]) => `<h2>${esc(tag)}</h2>${items.join("")}`)
    .join("");
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${esc(info.title)} reference</title>
<style>
body{font-family:system-ui,sans-serif;margin:0;display:flex;color:#1f2328;line-height:1.45}
nav{width:20rem;flex:none;height:100vh;overflow:auto;position:sticky;top:0;background:#f6f8fa;padding:1rem;box-sizing:border-box;font-size:.85rem}
nav ul{list-style:none;padding:0}nav li{margin:.25rem 0}nav a{color:inherit;text-decoration:none}
main{padding:1rem 2rem;max-width:60rem}section{border-top:1px solid #d0d7de;padding:.5rem 0}
table{border-collapse:collapse;width:100%;font-size:.9rem}td,th{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
.m{display:inline-block;min-width:3.5rem;font-weight:700;font-size:.75rem}.get{color:#1a7f37}.post{color:#0969da}.put,.patch{color:#9a6700}.delete{color:#cf222e}
.req{color:#cf222e;font-size:.75rem}code{font-size:.9em}
</style></head><body>
<nav aria-label="Endpoints"><strong>${esc(info.title)}</strong> <small>v${esc(info.version)}</small><ul>${toc.join("")}</ul><p><a href="/v1/openapi.json">openapi.json</a></p></nav>
<main><h1>${esc(info.title)} reference</h1><p>${esc(info.description)}</p>${sections}</main></body></html>`;
}
