import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { csvResponse, keysetBatches, wantsCsv } from "../../server/api/csvExport.js";

/** The streamed CSV answer: batches read only as the client takes them, keyset paging to the last row. */

describe("csvResponse", () => {
  it("reads the next batch only when the client has taken the previous one, and stops when cancelled", async () => {
    let pulled = 0;
    let finished = false;
    async function* batches() {
      try {
        for (let i = 0; i < 100; i++) {
          pulled++;
          yield [{ n: i }];
        }
      } finally {
        finished = true;
      }
    }
    const app = new Hono().get("/", (c) =>
      csvResponse(c, {
        name: "things",
        columns: [{ header: "N", value: (r: { n: number }) => r.n }],
        batches: batches(),
        timeZone: "Asia/Tokyo",
        nowMs: Date.parse("2026-03-10T20:00:00Z"),
      }),
    );
    const res = await app.request("/");
    // Tokyo is already on 11 March.
    expect(res.headers.get("Content-Disposition")).toBe('attachment; filename="things-2026-03-11.csv"');
    const reader = (res.body as ReadableStream<Uint8Array>).getReader();
    const decode = new TextDecoder("utf-8", { ignoreBOM: true });
    expect(decode.decode((await reader.read()).value)).toBe("\uFEFFN\r\n");
    expect(decode.decode((await reader.read()).value)).toBe("0\r\n");
    expect(pulled).toBeLessThanOrEqual(2);
    await reader.cancel();
    expect(finished).toBe(true);
    expect(pulled).toBeLessThan(100);
  });
});

describe("keysetBatches", () => {
  it("pages after the last row of each full batch until a short one", async () => {
    const all = Array.from({ length: 7 }, (_, i) => ({ id: String(100 - i) }));
    const calls: (string | undefined)[] = [];
    const fetch = async (after: { sort: string; id: string } | undefined, limit: number) => {
      calls.push(after?.id);
      const start = after ? all.findIndex((r) => r.id === after.id) + 1 : 0;
      return all.slice(start, start + limit);
    };
    const seen: string[] = [];
    for await (const batch of keysetBatches(fetch, (r) => ({ sort: r.id, id: r.id }), 3))
      seen.push(...batch.map((r) => r.id));
    expect(seen).toEqual(all.map((r) => r.id));
    expect(calls).toEqual([undefined, "98", "95"]);
  });
});

describe("wantsCsv", () => {
  const ask = async (accept?: string) => {
    const app = new Hono().get("/", (c) => c.text(wantsCsv(c) ? "csv" : "json"));
    return (await app.request("/", accept ? { headers: { Accept: accept } } : {})).text();
  };
  it("answers CSV only when Accept prefers it", async () => {
    expect(await ask()).toBe("json");
    expect(await ask("*/*")).toBe("json");
    expect(await ask("application/json")).toBe("json");
    expect(await ask("text/csv")).toBe("csv");
    expect(await ask("text/csv, application/json;q=0.5")).toBe("csv");
    expect(await ask("application/json, text/csv;q=0.5")).toBe("json");
  });
});
