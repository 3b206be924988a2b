// Inline SVG bar charts for report.html: no script, no font file, the same bytes for the same
// data.
import { esc } from "./escape.js";

const MAX_BARS = 15;
const LABEL_CHARS = 42;

/** Horizontal bars of the first rows, as given (the tables are sorted already), of `total`. */
export function barChart(
  items: readonly { label: string; value: number }[],
  title: string,
  total: number = items.length,
): string {
  const bars = items.slice(0, MAX_BARS);
  const max = Math.max(1, ...bars.map((b) => b.value));
  const rowH = 16;
  const labelW = 250;
  const barW = 380;
  const width = labelW + barW + 70;
  const height = 22 + bars.length * rowH;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" role="img" aria-label="${esc(title)}">`,
    `<text x="0" y="12" font-size="10" font-weight="bold" fill="#1b1f24">${esc(title)}${total > bars.length ? ` (first ${bars.length} of ${total})` : ""}</text>`,
  ];
  bars.forEach((b, i) => {
    const y = 20 + i * rowH;
    const w = Math.round((Math.max(0, b.value) / max) * barW * 10) / 10;
    const label =
      b.label.length > LABEL_CHARS
        ? `${b.label.slice(0, LABEL_CHARS - 1)}…`
        : b.label;
    out.push(
      `<text x="${labelW - 6}" y="${y + 11}" font-size="9" text-anchor="end" fill="#1b1f24">${esc(label)}</text>`,
      `<rect x="${labelW}" y="${y + 2}" width="${w}" height="${rowH - 5}" fill="#3f6fb5"/>`,
      `<text x="${labelW + w + 4}" y="${y + 11}" font-size="9" fill="#1b1f24">${b.value}</text>`,
    );
  });
  out.push("</svg>");
  return out.join("");
}
