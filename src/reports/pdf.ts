// report.pdf: report.html printed by the system's headless Chromium (driven by playwright-core,
// which downloads no browser). JavaScript is off and every request the page would make is
// refused: the page is self-contained. Chromium stamps each PDF with the time and a random
// document id; both are replaced (same length, so the offsets stay right) by values derived
// from the HTML, so the same report gives the same PDF.
import { accessSync, constants, existsSync } from "node:fs";
import { delimiter, join } from "node:path";
import { createHash } from "node:crypto";
import type { Browser } from "playwright-core";

const CANDIDATES = [
  "chromium",
  "chromium-browser",
  "google-chrome",
  "google-chrome-stable",
];
const MAC_APPS = [
  "/Applications/Chromium.app/Contents/MacOS/Chromium",
  "/Applications/Google Chrome.app/Contents/MacOS/Google Chrome",
];

export type ChromiumLookup =
  { found: true; path: string } | { found: false; reason: string };

/** The configured Chromium, or the first one on PATH (and the usual macOS apps). */
export function findChromium(
  configured: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): ChromiumLookup {
  if (configured !== undefined) {
    return isExecutable(configured)
      ? { found: true, path: configured }
      : {
          found: false,
          reason: `the configured Chromium ${configured} (SESSIONHOUSE_CHROMIUM_PATH, reports.chromiumPath) is not an executable file`,
        };
  }
  for (const dir of (env.PATH ?? "").split(delimiter).filter(Boolean))
    for (const name of CANDIDATES) {
      const path = join(dir, name);
      if (isExecutable(path)) return { found: true, path };
    }
  for (const path of MAC_APPS)
    if (isExecutable(path)) return { found: true, path };
  return {
    found: false,
    reason: `no Chromium found (looked for ${CANDIDATES.join(", ")} on PATH); install it (Debian/Ubuntu: apt-get install chromium; macOS: brew install --cask chromium) or set SESSIONHOUSE_CHROMIUM_PATH`,
  };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return existsSync(path);
  } catch {
    return false;
  }
}

export interface PdfResult {
  pdf: Buffer;
  /** Requests the page tried to make (refused); a self-contained page makes none. */
  refusedRequests: string[];
}

/**
 * Prints `html` to an A4 PDF with page numbers in the footer, in a browser of its own launched
 * from `chromium`, or in the given one (several reports in one go).
 */
export async function renderPdf(
  html: string,
  footer: string,
  chromium: string | Browser,
): Promise<PdfResult> {
  const browser =
    typeof chromium === "string" ? await launchChromium(chromium) : chromium;
  const context = await browser.newContext({ javaScriptEnabled: false });
  try {
    const refusedRequests: string[] = [];
    await context.route("**/*", async (route) => {
      refusedRequests.push(route.request().url());
      await route.abort("blockedbyclient");
    });
    const page = await context.newPage();
    await page.setContent(html, { waitUntil: "load" });
    await page.emulateMedia({ media: "print" });
    const pdf = await page.pdf({
      format: "A4",
      printBackground: true,
      displayHeaderFooter: true,
      headerTemplate: "<span></span>",
      footerTemplate: `<div style="font-size:7px;width:100%;text-align:center;color:#555">${footer} &mdash; page <span class="pageNumber"></span> of <span class="totalPages"></span></div>`,
      margin: { top: "14mm", bottom: "16mm", left: "12mm", right: "12mm" },
    });
    return {
      pdf: fixedPdfStamps(pdf, createHash("sha256").update(html).digest()),
      refusedRequests,
    };
  } finally {
    await context.close();
    if (typeof chromium === "string") await browser.close();
  }
}

/** A headless Chromium launched from `path`, for renderPdf. */
async function launchChromium(path: string): Promise<Browser> {
  const { chromium } = await import("playwright-core");
  return chromium.launch({ executablePath: path, headless: true });
}

/** A Chromium launched ahead of the page it will print; closed by `close` whether or not used. */
export interface EarlyChromium {
  /** The browser once launched; rejects with the launch's error. */
  browser(): Promise<Browser>;
  close(): Promise<void>;
}

/**
 * Starts Chromium from `path` now, so that its launch runs while the report is read instead of
 * after it. A failed launch is reported by `browser()`, never as an unhandled rejection.
 */
export function startChromium(path: string): EarlyChromium {
  const launched = launchChromium(path).then(
    (b) => ({ ok: true as const, b }),
    (err: unknown) => ({ ok: false as const, err }),
  );
  return {
    browser: async () => {
      const r = await launched;
      if (!r.ok) throw r.err;
      return r.b;
    },
    close: async () => {
      const r = await launched;
      if (r.ok) await r.b.close();
    },
  };
}

/**
 * The PDF with its creation and modification dates set to 2000-01-01 and its document id to
 * bytes of `seed`, each replaced by text of the same length.
 */
export function fixedPdfStamps(pdf: Buffer, seed: Buffer): Buffer {
  let text = pdf.toString("latin1");
  text = text.replace(
    /\/(CreationDate|ModDate) \(D:([^)]*)\)/g,
    (_m, key: string, value: string) =>
      `/${key} (D:${"20000101000000+00'00'".padEnd(value.length, " ").slice(0, value.length)})`,
  );
  const hex = seed.toString("hex").toUpperCase().repeat(4);
  text = text.replace(
    /\/ID \[<([0-9A-Fa-f]+)> <([0-9A-Fa-f]+)>\]/g,
    (_m, a: string, b: string) =>
      `/ID [<${hex.slice(0, a.length)}> <${hex.slice(0, b.length)}>]`,
  );
  return Buffer.from(text, "latin1");
}
