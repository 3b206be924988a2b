// The pure parts of the reports: periods, directory names, filters, formats, CSV.
import { describe, expect, it } from "vitest";
import { parseFormats } from "../../../src/cli/commands/report.js";
import { main } from "../../../src/cli/main.js";
import { REPORT_KINDS } from "../../../src/config/index.js";
import { KINDS } from "../../../src/reports/build.js";
import { tableCsv } from "../../../src/reports/csv.js";
import { renderHtml } from "../../../src/reports/html.js";
import { columns, type Report } from "../../../src/reports/model.js";
import { previousPeriod, reportDirName } from "../../../src/reports/period.js";
import { parseFilters } from "../../../src/reports/produce.js";
import { fixedPdfStamps } from "../../../src/reports/pdf.js";

const iso = (p: { fromMs: number; toMs: number }) => [
  new Date(p.fromMs).toISOString(),
  new Date(p.toMs).toISOString(),
];

describe("periods", () => {
  it("the previous month, ISO week and day before an instant, in UTC", () => {
    const now = Date.UTC(2026, 0, 1, 6, 0); // Thursday 2026-01-01 06:00
    expect(iso(previousPeriod("previous-month", now))).toEqual([
      "2025-12-01T00:00:00.000Z",
      "2026-01-01T00:00:00.000Z",
    ]);
    expect(iso(previousPeriod("previous-week", now))).toEqual([
      "2025-12-22T00:00:00.000Z",
      "2025-12-29T00:00:00.000Z",
    ]);
    expect(iso(previousPeriod("previous-day", now))).toEqual([
      "2025-12-31T00:00:00.000Z",
      "2026-01-01T00:00:00.000Z",
    ]);
    // On a Monday the previous week ends that midnight.
    expect(
      iso(previousPeriod("previous-week", Date.UTC(2026, 10, 16, 0, 0))),
    ).toEqual(["2026-11-09T00:00:00.000Z", "2026-11-16T00:00:00.000Z"]);
  });

  it("names a directory by kind and period, keeping times that are not midnight", () => {
    expect(
      reportDirName(
        "access-review",
        Date.UTC(2026, 9, 1),
        Date.UTC(2026, 10, 1),
      ),
    ).toBe("access-review-2026-10-01-to-2026-11-01");
    expect(
      reportDirName(
        "policy-exceptions",
        Date.UTC(2026, 9, 1, 12, 30),
        Date.UTC(2026, 9, 2),
      ),
    ).toBe("policy-exceptions-2026-10-01T123000-to-2026-10-02");
  });
});

describe("arguments", () => {
  it("filters: known keys only", () => {
    expect(parseFilters("user=a@x.io, resource=pg-prod-1")).toEqual({
      user: "a@x.io",
      resource: "pg-prod-1",
    });
    expect(parseFilters("")).toEqual({});
    expect(() => parseFilters("team=x")).toThrow(/not key=value/);
    expect(() => parseFilters("user")).toThrow(/not key=value/);
  });

  it("the command refuses bad input with exit status 2 before opening anything", async () => {
    const report = (...args: string[]) =>
      main(["node", "sessionhouse", "report", ...args]);
    expect(await report("access-review", "--format", "docx")).toBe(2);
    expect(await report("access-review", "--filter", "team=x")).toBe(2);
    expect(
      await report(
        "access-review",
        "--from",
        "2026-11-01",
        "--to",
        "2026-10-01",
      ),
    ).toBe(2);
    expect(await report("access-review", "--from", "yesterday-ish")).toBe(2);
    expect(await report("no-such-kind")).toBe(2);
  });

  it("formats: known ones, at least one", () => {
    expect(parseFormats("html, csv")).toEqual(["html", "csv"]);
    expect(() => parseFormats("docx")).toThrow(/not a report format/);
    expect(() => parseFormats(",")).toThrow(/lists no format/);
  });
});

describe("CSV", () => {
  it("quotes what needs it and keeps a spreadsheet from running a formula", () => {
    const csv = tableCsv({
      columns: columns("who", "n:number", "ok:bool"),
      rows: [
        { who: 'a, "b"', n: -3, ok: true },
        { who: "=HYPERLINK(1)", n: 0, ok: false },
      ],
    });
    expect(csv).toBe(
      'who,n,ok\r\n"a, ""b""",-3,true\r\n\'=HYPERLINK(1),0,false\r\n',
    );
  });
});

describe("report specs", () => {
  it("every kind's tables have distinct ids (CSV names) and sit in a section it declares, every section holds one", () => {
    for (const kind of REPORT_KINDS) {
      const { sections, tables } = KINDS[kind];
      const ids = tables.map((t) => t.id);
      expect(new Set(ids).size, kind).toBe(ids.length);
      const declared = sections.map((s) => s.id);
      for (const t of tables)
        expect(declared, `${kind} ${t.id}`).toContain(t.section);
      for (const s of declared)
        expect(
          tables.map((t) => t.section),
          `${kind} ${s}`,
        ).toContain(s);
    }
  });

  it("the HTML shows the rows a table holds, says how many more its CSV has, and its own text when empty", () => {
    const rows = Array.from({ length: 3 }, (_, i) => ({ n: i }));
    const report = (tables: Report["sections"][number]["tables"]): Report => ({
      kind: "access-review",
      title: "T",
      product: { name: "p", version: "1" },
      database: "db",
      period: { from: "a", to: "b" },
      filters: {},
      notices: [],
      summary: [],
      sections: [{ id: "s", title: "S", tables }],
    });
    const t = { title: "t", note: "", columns: columns("n:number") };
    const html = renderHtml(
      report([
        { ...t, id: "all", rows, total: 3, csv: "all.csv" },
        { ...t, id: "top", rows, total: 12_345, csv: "top.csv" },
        { ...t, id: "nocsv", rows, total: 4 },
        { ...t, id: "none", rows: [], total: 0 },
        {
          ...t,
          id: "quiet",
          rows: [],
          total: 0,
          empty: "Nobody was suspended.",
        },
      ]),
    );
    const shown = (id: string) =>
      html.split(`data-table="${id}"`)[1]?.split("</table>")[0]?.match(/<tr>/g)
        ?.length;
    expect(shown("all")).toBe(4); // the header row and 3
    expect(shown("top")).toBe(4);
    expect(html).not.toContain('data-more="all"');
    expect(html).toContain(
      '<p class="note" data-more="top">3 of 12,345 rows; all 12,345 in top.csv.</p>',
    );
    expect(html).toContain(
      "3 of 4 rows; all 4 are in nocsv.csv of a report made with the csv format.",
    );
    expect(html).toContain("No rows in the period.");
    expect(html).toContain("<i>Nobody was suspended.</i>");
  });
});

describe("PDF stamps", () => {
  it("replaces the dates and the document id with text of the same length", () => {
    const pdf = Buffer.from(
      "<< /CreationDate (D:20261123143000+00'00') /ModDate (D:20261123143000+00'00') >>\ntrailer << /ID [<0A1B2C3D4E5F60718293A4B5C6D7E8F9> <0A1B2C3D4E5F60718293A4B5C6D7E8F9>] >>",
      "latin1",
    );
    const seed = Buffer.alloc(32, 0xab);
    const out = fixedPdfStamps(pdf, seed);
    expect(out.length).toBe(pdf.length);
    expect(out.toString("latin1")).toContain(
      "/CreationDate (D:20000101000000+00'00')",
    );
    expect(out.toString("latin1")).toContain(
      "/ID [<ABABABABABABABABABABABABABABABAB> <ABABABABABABABABABABABABABABABAB>]",
    );
    expect(fixedPdfStamps(pdf, seed).equals(out)).toBe(true);
  });
});
