// report.html: one self-contained page (no script, no external font, image or stylesheet; a
// Content-Security-Policy that forbids loading anything), charts as inline SVG, print CSS for A4.
// The first page holds the title, the period, what the record does not cover and the summary.
import { TOP_ROWS, type Cell, type Report, type ReportTable } from "./model.js";
import { esc } from "./escape.js";
import { barChart } from "./svg.js";

function cell(v: Cell | undefined): string {
  if (typeof v === "number") return String(v);
  if (typeof v === "boolean") return v ? "yes" : "no";
  return esc(v ?? "");
}

const CSS = `
*{box-sizing:border-box}
body{font-family:"DejaVu Sans","Liberation Sans",Arial,Helvetica,sans-serif;font-size:10pt;color:#1b1f24;margin:24px;line-height:1.35}
h1{font-size:18pt;margin:0 0 4px}
h2{font-size:13pt;margin:22px 0 6px;border-bottom:1px solid #c9ced6;padding-bottom:3px}
h3{font-size:11pt;margin:14px 0 4px}
.meta{color:#4a5360;margin:0 0 10px}
.meta td{padding:1px 12px 1px 0}
.notices{border:2px solid #b3261e;background:#fdf1f0;padding:8px 12px;margin:10px 0}
.notices.ok{border-color:#2e7d32;background:#f1f8f2}
.notices h2{border:0;margin:0 0 4px;font-size:12pt}
.notices li{margin:2px 0}
.notice-info{color:#4a5360}
.summary{display:flex;flex-wrap:wrap;gap:8px;margin:10px 0}
.figure{border:1px solid #c9ced6;padding:6px 10px;min-width:120px}
.figure b{display:block;font-size:14pt}
.note{color:#4a5360;margin:0 0 6px}
.missing{color:#b3261e;font-weight:bold}
table.data{border-collapse:collapse;width:100%;margin:4px 0 10px;font-size:8.5pt}
table.data th,table.data td{border:1px solid #d5d9df;padding:2px 4px;text-align:left;vertical-align:top;word-break:break-word}
table.data th{background:#eef1f5}
table.data td.n{text-align:right;font-variant-numeric:tabular-nums}
table.data thead{display:table-header-group}
table.data tr{break-inside:avoid}
svg{display:block;margin:4px 0 8px}

@page{size:A4;margin:14mm 12mm 16mm}
@media print{body{margin:0}h2,h3{break-after:avoid}}
`;

function renderTable(t: ReportTable): string {
  const parts = [`<h3 id="${esc(t.id)}">${esc(t.title)}</h3>`];
  parts.push(`<p class="note">${esc(t.note)}</p>`);
  if (t.notExported) {
    parts.push(
      `<p class="missing">Not in this report: ${esc(t.notExported.join(", "))} ${t.notExported.length > 1 ? "are" : "is"} not exported to this warehouse.</p>`,
    );
    return parts.join("\n");
  }
  if (t.total === 0) {
    parts.push(
      `<p class="note"><i>${esc(t.empty ?? "No rows in the period.")}</i></p>`,
    );
    return parts.join("\n");
  }
  if (t.chart) {
    const { label, value } = t.chart;
    parts.push(
      barChart(
        t.rows.map((r) => ({
          label: String(r[label] ?? ""),
          value: Number(r[value] ?? 0),
        })),
        `${t.title}: ${value.replaceAll("_", " ")}`,
        t.total,
      ),
    );
  }
  const shown = t.rows;
  parts.push(`<table class="data" data-table="${esc(t.id)}"><thead><tr>`);
  parts.push(t.columns.map((c) => `<th>${esc(c.label)}</th>`).join(""));
  parts.push("</tr></thead><tbody>");
  for (const r of shown)
    parts.push(
      `<tr>${t.columns
        .map(
          (c) =>
            `<td${c.kind === "number" ? ' class="n"' : ""} data-key="${esc(c.key)}">${cell(r[c.key])}</td>`,
        )
        .join("")}</tr>`,
    );
  parts.push("</tbody></table>");
  if (t.total > shown.length)
    parts.push(`<p class="note" data-more="${esc(t.id)}">${rowsNote(t)}</p>`);
  return parts.join("\n");
}

/** Said under a table holding only its first rows: how many there are, and where all of them are. */
function rowsNote(t: ReportTable): string {
  const n = t.rows.length.toLocaleString("en-US");
  const m = t.total.toLocaleString("en-US");
  return t.csv
    ? `${n} of ${m} rows; all ${m} in ${esc(t.csv)}.`
    : `${n} of ${m} rows; all ${m} are in ${esc(t.id)}.csv of a report made with the csv format.`;
}

export function renderHtml(report: Report): string {
  const warnings = report.notices.filter((n) => n.level === "warning");
  const infos = report.notices.filter((n) => n.level === "info");
  const filters = Object.entries(report.filters);
  const head = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>${esc(report.title)} ${esc(report.period.from)} to ${esc(report.period.to)}</title>
<style>${CSS}</style>
</head>
<body>`;
  const first = [
    `<section class="first-page">`,
    `<h1>${esc(report.title)}</h1>`,
    `<table class="meta"><tbody>`,
    `<tr><td>Period</td><td><b>${esc(report.period.from)}</b> to <b>${esc(report.period.to)}</b> (UTC, end excluded)</td></tr>`,
    `<tr><td>Filters</td><td>${filters.length === 0 ? "none" : esc(filters.map(([k, v]) => `${k}=${v}`).join(", "))}</td></tr>`,
    `<tr><td>Source</td><td>${esc(report.product.name)} ${esc(report.product.version)}, database ${esc(report.database)}</td></tr>`,
    `</tbody></table>`,
    warnings.length > 0
      ? `<div class="notices" id="coverage-notices"><h2>The record does not fully cover this report</h2><ul>${warnings
          .map((n) => `<li>${esc(n.text)}</li>`)
          .join("")}</ul></div>`
      : `<div class="notices ok" id="coverage-notices"><h2>The record covers the whole period</h2><p>Every stream the report relies on is known complete over the period (its checkpoint is past the period's end, or completed backfills cover the rest); no window of it is pending, poisoned or skipped; no record of it was dead-lettered.</p></div>`,
    infos.length > 0
      ? `<ul class="notice-info">${infos.map((n) => `<li>${esc(n.text)}</li>`).join("")}</ul>`
      : "",
    `<div class="summary">${report.summary
      .map(
        (f) =>
          `<div class="figure" data-figure="${esc(f.label)}">${esc(f.label)}<b>${cell(f.value)}</b></div>`,
      )
      .join("")}</div>`,
    `<h3>Contents</h3><ol>${report.sections
      .map((s) => `<li>${esc(s.title)}</li>`)
      .join("")}</ol>`,
    `<p class="note">This document shows the first ${TOP_ROWS.toLocaleString("en-US")} rows of each table; its CSV file (made with the csv format) holds all of them. report.json holds the same data as this document for programs, and manifest.json every file's SHA-256, the SQL that produced them and, when signed, an Ed25519 signature (check it with <code>sessionhouse report verify DIR</code>).</p>`,
    `</section>`,
  ];
  const body = report.sections.map(
    (s) =>
      `<section id="${esc(s.id)}"><h2>${esc(s.title)}</h2>\n${s.tables.map(renderTable).join("\n")}</section>`,
  );
  return `${head}\n${first.join("\n")}\n${body.join("\n")}\n</body>\n</html>\n`;
}
