/**
 * Stripe's form encoding: `application/x-www-form-urlencoded` with bracket notation, as stripe-node and
 * Stripe.js send it (`metadata[formId]=x`, `enabled_events[0]=a`, `expand[]=latest_charge`,
 * `payment_method_data[card][number]=4242…`). Parsed into nested objects and arrays of strings.
 */

export type FormValue = string | FormValue[] | { [key: string]: FormValue };
export type FormParams = { [key: string]: FormValue };

const UNSAFE_KEYS = new Set(["__proto__", "prototype", "constructor"]);

function decode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    return part;
  }
}

/** `a[b][0][]` → ["a", "b", "0", ""] (an empty segment means "append"). */
function splitKey(key: string): string[] {
  const open = key.indexOf("[");
  if (open <= 0) return [key];
  const segments = [key.slice(0, open)];
  const re = /\[([^\]]*)\]/g;
  let match: RegExpExecArray | null = re.exec(key);
  while (match !== null) {
    segments.push(match[1]);
    match = re.exec(key);
  }
  return segments;
}

type Node = { [key: string]: Node | string };

/** Objects whose keys are all array indices become arrays, except under `metadata` (free-form keys). */
function finish(node: Node | string, parentKey: string): FormValue {
  if (typeof node === "string") return node;
  const keys = Object.keys(node);
  const children: { [key: string]: FormValue } = {};
  for (const k of keys) children[k] = finish(node[k], k);
  if (parentKey !== "metadata" && keys.length > 0 && keys.every((k) => /^\d+$/.test(k))) {
    return keys
      .map(Number)
      .sort((a, b) => a - b)
      .map((i) => children[String(i)]);
  }
  return children;
}

export function parseForm(body: string): FormParams {
  const root: Node = {};
  if (!body) return {};
  for (const pair of body.split("&")) {
    if (!pair) continue;
    const eq = pair.indexOf("=");
    const rawKey = decode(eq === -1 ? pair : pair.slice(0, eq));
    const value = eq === -1 ? "" : decode(pair.slice(eq + 1));
    const segments = splitKey(rawKey);
    if (segments.some((s) => UNSAFE_KEYS.has(s))) continue;
    let node: Node = root;
    for (let i = 0; i < segments.length; i++) {
      let segment = segments[i];
      const last = i === segments.length - 1;
      if (segment === "") segment = String(Object.keys(node).length);
      if (last) {
        node[segment] = value;
      } else {
        const next = node[segment];
        if (next === undefined || typeof next === "string") {
          const created: Node = {};
          node[segment] = created;
          node = created;
        } else {
          node = next;
        }
      }
    }
  }
  const out: FormParams = {};
  for (const k of Object.keys(root)) out[k] = finish(root[k], k);
  return out;
}

/** The inverse, used by tests and by the emulator's own helpers. */
export function encodeForm(data: unknown, prefix = ""): string {
  const pairs: string[] = [];
  const walk = (key: string, value: unknown): void => {
    if (value === undefined) return;
    if (value === null || typeof value !== "object") {
      pairs.push(`${encodeURIComponent(key)}=${encodeURIComponent(value === null ? "" : String(value))}`);
      return;
    }
    if (Array.isArray(value)) {
      value.forEach((v, i) => {
        walk(`${key}[${i}]`, v);
      });
      return;
    }
    for (const [k, v] of Object.entries(value)) walk(key ? `${key}[${k}]` : k, v);
  };
  walk(prefix, data);
  return pairs.join("&");
}
