import { describe, expect, it } from "vitest";
import { CsvNumber, csvField, csvHeader, csvMoney, csvRecord, csvRows, UTF8_BOM } from "../../shared/csv.js";

/** The CSV writer: RFC 4180 quoting, formula cells shown as text, our own numbers as numbers, any script. */

describe("csvField", () => {
  it("leaves plain text alone and quotes a field with a comma, quote, CR or LF, doubling its quotes", () => {
    expect(csvField("Ada Lovelace")).toBe("Ada Lovelace");
    expect(csvField("Smith, Jane")).toBe('"Smith, Jane"');
    expect(csvField('The "Roof" Fund')).toBe('"The ""Roof"" Fund"');
    expect(csvField("line one\nline two")).toBe('"line one\nline two"');
    expect(csvField("a\r\nb")).toBe('"a\r\nb"');
    expect(csvField("")).toBe("");
  });

  it("writes a cell a spreadsheet would run as a formula with a leading quote, so it shows as text", () => {
    expect(csvField('=HYPERLINK("http://evil","x")')).toBe('"\'=HYPERLINK(""http://evil"",""x"")"');
    expect(csvField("+1 555 0100")).toBe("'+1 555 0100");
    expect(csvField("-2+3")).toBe("'-2+3");
    expect(csvField("@SUM(A1)")).toBe("'@SUM(A1)");
    expect(csvField("\tcmd")).toBe("'\tcmd");
    expect(csvField("\r=1")).toBe('"\'\r=1"');
    // Only the first character counts.
    expect(csvField("a=b")).toBe("a=b");
  });

  it("quotes a field with a semicolon, so a spreadsheet splitting on `;` cannot make a formula cell of its rest", () => {
    expect(csvField("Ann;=1+1;")).toBe('"Ann;=1+1;"');
    expect(csvField("Lee;=WEBSERVICE(K2)")).toBe('"Lee;=WEBSERVICE(K2)"');
    expect(csvField("=a;b")).toBe('"\'=a;b"');
  });

  it("writes numbers we produce as numbers, a negative one included, and empty for none", () => {
    expect(csvField(-3)).toBe("-3");
    expect(csvField(new CsvNumber("-12.50"))).toBe("-12.50");
    expect(csvField(null)).toBe("");
    expect(csvField(undefined)).toBe("");
    expect(csvField(true)).toBe("true");
    expect(csvField(Number.NaN)).toBe("");
  });

  it("keeps any script as it is (the response encodes it as UTF-8)", () => {
    expect(csvField("José Müller")).toBe("José Müller");
    expect(csvField("محمد")).toBe("محمد");
    expect(csvField("山田, 花子")).toBe('"山田, 花子"');
    expect(csvField("🎉")).toBe("🎉");
    expect([...new TextEncoder().encode(UTF8_BOM)]).toEqual([0xef, 0xbb, 0xbf]);
  });
});

describe("records", () => {
  it("ends every record with CRLF and writes a header and rows of columns", () => {
    expect(csvRecord(["a", 1, null, "b,c"])).toBe('a,1,,"b,c"\r\n');
    const columns = [
      { header: "Name", value: (r: { name: string; cents: number }) => r.name },
      { header: "Amount", value: (r: { name: string; cents: number }) => csvMoney(r.cents, "USD") },
    ];
    expect(csvHeader(columns)).toBe("Name,Amount\r\n");
    expect(
      csvRows(columns, [
        { name: "=cmd", cents: 2550 },
        { name: "Bob", cents: -300 },
      ]),
    ).toBe("'=cmd,25.50\r\nBob,-3.00\r\n");
  });

  it("writes money in its currency's decimals", () => {
    expect(csvMoney(2550, "USD").text).toBe("25.50");
    expect(csvMoney(100_000, "JPY").text).toBe("1000");
    expect(csvMoney(1, "EUR").text).toBe("0.01");
  });
});
