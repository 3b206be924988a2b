// One CSV per report table (RFC 4180: comma, CRLF, quotes doubled). A text cell starting with
// = + - @ or a tab is prefixed with ' so a spreadsheet shows it instead of running it as a
// formula (query text and user names come from outside).
import type { ReportTable } from "./model.js";

export function tableCsv(t: ReportTable): string {
  const lines = [t.columns.map((c) => quote(c.key)).join(",")];
  for (const row of t.rows)
    lines.push(
      t.columns
        .map((c) => {
          const v = row[c.key];
          if (typeof v === "number") return String(v);
          if (typeof v === "boolean") return v ? "true" : "false";
          return quote(
            /^[=+\-@\t\r]/.test(v ?? "") ? `'${v ?? ""}` : (v ?? ""),
          );
        })
        .join(","),
    );
  return `${lines.join("\r\n")}\r\n`;
}

function quote(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}
