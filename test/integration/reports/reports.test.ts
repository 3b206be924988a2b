// Compliance reports from simulator data: each kind rendered in headless Chromium (no console
// error, no request leaving the page), its PDF read back with pdftotext and pdfinfo, its numbers
// checked against an independent ClickHouse query in HTML, CSV and JSON; report verify against a
// changed byte and another key; page one saying what the record does not cover.
import { execFileSync } from "node:child_process";
import { generateKeyPairSync } from "node:crypto";
import {
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { reportFrom } from "../../../src/reports/produce.js";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import { reportWithReadAccess } from "../../../src/cli/commands/report.js";
import { main } from "../../../src/cli/main.js";
import { reportJobs } from "../../../src/scheduler/report-jobs.js";
import { createLogger } from "../../../src/util/logger.js";
import { openWarehouse } from "../../../src/warehouse/client.js";
import { insertHits } from "../../../src/warehouse/detections.js";
import { startReadAccess } from "../../../src/http-front/index.js";
import {
  loadConfig,
  REPORT_KINDS,
  type Config,
  type ReportKind,
} from "../../../src/config/index.js";
import { verifyEvidence } from "../../../src/evidence/manifest.js";
import { findChromium } from "../../../src/reports/pdf.js";
import type { FatalError } from "../../../src/util/errors.js";
import { select } from "../../helpers/warehouse.js";
import {
  FROM,
  TO,
  reportFixture,
  type Fixture,
} from "../../helpers/report-fixture.js";

const CHROMIUM = findChromium(undefined);
const chromiumPath = CHROMIUM.found ? CHROMIUM.path : "";
let f: Fixture;
let browser: Browser;

beforeAll(async () => {
  if (!CHROMIUM.found) throw new Error(CHROMIUM.reason);
  f = await reportFixture();
  browser = await chromium.launch({ executablePath: chromiumPath });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await f?.w.close();
  await f?.sim.close();
});

function withConfig(extra: Record<string, unknown>): Config {
  return loadConfig({
    env: {
      SESSIONHOUSE_API_URL: f.sim.url,
      SESSIONHOUSE_API_KEY: "k",
      SESSIONHOUSE_DATA_DIR: f.config.clickhouse.dataDir,
      CLICKHOUSE_DATABASE: f.w.database,
      ...(f.config.clickhouse.url
        ? { CLICKHOUSE_URL: f.config.clickhouse.url }
        : {}),
    },
    overrides: { "reports.chromiumPath": chromiumPath, ...extra },
  });
}

/**
 * The person of a session, independently of the report's code: with the control-plane streams
 * (sessions_enriched) the human's e-mail, else a linked group's name, else the user key.
 */
async function sessionsWithPerson(): Promise<string> {
  const [r] = await select<{ n: string }>(
    f.w,
    `SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = 'sessions_enriched'`,
    { db: f.w.database },
  );
  return Number(r?.n) === 1
    ? `(SELECT *, multiIf(person_email != '', person_email, person_via != 'brand' AND person_name != '', person_name, user_key) AS person FROM {db}.sessions_enriched)`
    : `(SELECT *, user_key AS person FROM {db}.sessions FINAL)`;
}

let seq = 0;
async function produce(
  kind: ReportKind,
  o: {
    config?: Config;
    fromMs?: number;
    toMs?: number;
    filters?: Record<string, string>;
    formats?: ("html" | "pdf" | "csv" | "json")[];
  } = {},
) {
  const out = join(f.outDir, `${kind}-${seq++}`);
  const written = await reportFrom(f.w, o.config ?? withConfig({}), {
    kind,
    fromMs: o.fromMs ?? FROM,
    toMs: o.toMs ?? TO,
    out,
    formats: o.formats ?? ["html", "pdf", "csv", "json"],
    filters: o.filters ?? {},
    generatedAtMs: Date.UTC(2026, 11, 1),
    // One Chromium for the file; the report without Chromium gets none.
    browser:
      o.config?.reports.chromiumPath === chromiumPath || !o.config
        ? browser
        : undefined,
  });
  return { out, written };
}

/** Each kind over the covered period in every format, made once for the tests that read it. */
const defaults = new Map<ReportKind, ReturnType<typeof produce>>();
function defaultReport(kind: ReportKind): ReturnType<typeof produce> {
  let r = defaults.get(kind);
  if (!r) {
    r = produce(kind);
    defaults.set(kind, r);
  }
  return r;
}

/** Opens report.html as a user would: console errors and requests made are collected. */
async function openHtml(dir: string) {
  const context = await browser.newContext();
  const requests: string[] = [];
  const errors: string[] = [];
  await context.route("**/*", async (route) => {
    const url = route.request().url();
    if (url.startsWith("file:") && url.endsWith("/report.html"))
      return route.continue();
    requests.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(m.text());
  });
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("requestfailed", (r) => {
    if (!requests.includes(r.url())) requests.push(r.url());
  });
  await page.goto(`file://${join(dir, "report.html")}`, { waitUntil: "load" });
  return { page, context, requests, errors };
}

function pdfText(dir: string, pages?: [number, number]): string {
  const range = pages ? ["-f", String(pages[0]), "-l", String(pages[1])] : [];
  return execFileSync(
    "pdftotext",
    [...range, "-layout", join(dir, "report.pdf"), "-"],
    { encoding: "utf8" },
  );
}
function pdfPages(dir: string): number {
  const info = execFileSync("pdfinfo", [join(dir, "report.pdf")], {
    encoding: "utf8",
  });
  return Number(/Pages:\s+(\d+)/.exec(info)?.[1] ?? 0);
}
function csvRows(dir: string, id: string): Record<string, string>[] {
  // RFC 4180: quoted fields may hold commas, doubled quotes and line breaks.
  const text = readFileSync(join(dir, `${id}.csv`), "utf8");
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? "";
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      record.push(field);
      field = "";
    } else if (c === "\r" && text[i + 1] === "\n") {
      record.push(field);
      records.push(record);
      field = "";
      record = [];
      i++;
    } else field += c;
  }
  const [keys = [], ...rows] = records;
  return rows.map((r) =>
    Object.fromEntries(r.map((v, i) => [keys[i] ?? "", v])),
  );
}
/** A query as the manifest records it. */
interface ManifestQuery {
  id: string;
  sql: string;
  params: Record<string, unknown>;
  rows: number;
}
interface JsonReport {
  notices: { level: string; text: string }[];
  sections: {
    tables: {
      id: string;
      rows: Record<string, unknown>[];
      notExported?: string[];
    }[];
  }[];
}
function jsonTable(dir: string, id: string) {
  const r = JSON.parse(
    readFileSync(join(dir, "report.json"), "utf8"),
  ) as JsonReport;
  const t = r.sections.flatMap((s) => s.tables).find((x) => x.id === id);
  if (!t) throw new Error(`no table ${id}`);
  return t;
}

const SECTIONS: Record<ReportKind, string[]> = {
  "access-review": [
    "Access review",
    "Access per person",
    "Systems reached per person",
    "New access since the previous period",
    "Privileged or production access",
    "Accounts with access but no activity",
  ],
  "policy-exceptions": [
    "Policy exceptions",
    "Policy suspensions in force during the period",
    "Sessions under a suspension",
  ],
  "sensitive-data-access": [
    "Sensitive data access",
    "Labelled data returned, by label",
    "by label and resource",
    "People with sessions on resources",
    "Top query fingerprints",
  ],
  "coverage-and-integrity": [
    "Coverage and integrity",
    "Checkpoints",
    "Windows not stored or skipped (aggregation jobs and sessions)",
    "Dead letters",
    "Sessions per month",
    "Retention",
  ],
};

describe("every kind", () => {
  for (const kind of REPORT_KINDS) {
    it(`${kind}: renders in Chromium without a console error or a request, and its PDF has its sections`, async () => {
      const { out, written } = await defaultReport(kind);
      expect(written.files).toContain("report.pdf");
      const files = readdirSync(out);
      for (const name of [
        "report.html",
        "report.pdf",
        "report.json",
        "manifest.json",
      ])
        expect(files).toContain(name);
      expect(files.some((n) => n.endsWith(".csv"))).toBe(true);
      const { page, context, requests, errors } = await openHtml(out);
      try {
        expect(await page.locator("h1").textContent()).toBe(SECTIONS[kind][0]);
        expect(await page.locator("svg").count()).toBeGreaterThan(
          kind === "policy-exceptions" ? -1 : 0,
        );
      } finally {
        await context.close();
      }
      expect(errors).toEqual([]);
      expect(requests).toEqual([]);
      const html = readFileSync(join(out, "report.html"), "utf8");
      expect(html).not.toMatch(
        /<script|<link|@import|url\(|https?:\/\/(?!www\.w3\.org\/2000\/svg)/i,
      );
      const text = pdfText(out).replace(/\s+/g, " ");
      for (const s of SECTIONS[kind]) expect(text).toContain(s);
      expect(pdfPages(out)).toBeGreaterThanOrEqual(
        kind === "policy-exceptions" ? 1 : 2,
      );
      expect(verifyEvidence(out).problems).toEqual([]);
    });
  }
});

describe("access-review", () => {
  it("HTML, CSV and JSON give every person's sessions and systems as ClickHouse counts them", async () => {
    const { out } = await defaultReport("access-review");
    const expected = await select<{
      person: string;
      sessions: string;
      systems: string;
    }>(
      f.w,
      `SELECT person, count() AS sessions, uniqExact(resource_name) AS systems
       FROM ${await sessionsWithPerson()}
       WHERE start_time >= fromUnixTimestamp64Milli({from:Int64}) AND start_time < fromUnixTimestamp64Milli({to:Int64})
       GROUP BY person ORDER BY person`,
      { from: FROM, to: TO },
    );
    expect(expected.length).toBeGreaterThan(10);
    const want = expected.map((r) => [
      r.person,
      Number(r.sessions),
      Number(r.systems),
    ]);
    const sort = (rows: (string | number)[][]) =>
      rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    const fromCsv = csvRows(out, "access-per-person").map((r) => [
      r.person ?? "",
      Number(r.sessions),
      Number(r.systems),
    ]);
    expect(sort(fromCsv)).toEqual(sort([...want]));
    const fromJson = jsonTable(out, "access-per-person").rows.map((r) => [
      String(r.person),
      Number(r.sessions),
      Number(r.systems),
    ]);
    expect(sort(fromJson)).toEqual(sort([...want]));
    const { page, context } = await openHtml(out);
    try {
      // The page's DOM, as far as this test reads it (the project's lib has no DOM types).
      interface Cell {
        textContent: string | null;
      }
      interface Tr {
        querySelector(selector: string): Cell | null;
      }
      const fromHtml: (string | number)[][] = await page.$$eval(
        'table[data-table="access-per-person"] tbody tr',
        (trs: Tr[]) =>
          trs.map((tr) => {
            const cell = (k: string) =>
              tr.querySelector(`td[data-key="${k}"]`)?.textContent ?? "";
            return [
              cell("person"),
              Number(cell("sessions")),
              Number(cell("systems")),
            ];
          }),
      );
      expect(sort(fromHtml)).toEqual(sort([...want]));
      const total = await page
        .locator('[data-figure="Sessions"] b')
        .textContent();
      expect(Number(total)).toBe(want.reduce((n, r) => n + Number(r[1]), 0));
    } finally {
      await context.close();
    }
  });

  it("systems reached per person agree with the sessions in ClickHouse, native users included", async () => {
    const { out } = await defaultReport("access-review");
    const expected = await select<{
      person: string;
      system: string;
      sessions: string;
      native_users: string;
    }>(
      f.w,
      `SELECT person, resource_name AS system, count() AS sessions,
              arrayStringConcat(arraySort(groupUniqArray(native_username)), ', ') AS native_users
       FROM ${await sessionsWithPerson()}
       WHERE start_time >= fromUnixTimestamp64Milli({from:Int64}) AND start_time < fromUnixTimestamp64Milli({to:Int64})
       GROUP BY person, system ORDER BY person, system`,
      { from: FROM, to: TO },
    );
    // Some pair ran as more than one native user, so the list is checked, not one name.
    expect(expected.some((r) => r.native_users.includes(", "))).toBe(true);
    const want = expected.map((r) => [
      r.person,
      r.system,
      Number(r.sessions),
      r.native_users,
    ]);
    expect(
      csvRows(out, "access-per-person-system").map((r) => [
        r.person,
        r.system,
        Number(r.sessions),
        r.native_users,
      ]),
    ).toEqual(want);
  });

  it("policy hits per person agree with the aggregation rows in ClickHouse", async () => {
    const { out } = await defaultReport("access-review");
    const expected = await select<{
      person: string;
      policy: string;
      hits: string;
    }>(
      f.w,
      `SELECT key1 AS person, key2 AS policy, sum(count) AS hits FROM {db}.agg_histogram FINAL
       WHERE job = 'policies_by_user' AND level = 2 AND count > 0 AND key1 NOT IN ('', 'none') AND key2 NOT IN ('', 'none')
         AND bucket_time >= fromUnixTimestamp64Milli({from:Int64}) AND bucket_time < fromUnixTimestamp64Milli({to:Int64})
       GROUP BY person, policy ORDER BY person, policy`,
      { from: FROM, to: TO },
    );
    expect(expected.length).toBeGreaterThan(0);
    const want = expected.map((r) => [r.person, r.policy, Number(r.hits)]);
    expect(
      csvRows(out, "access-policy-hits").map((r) => [
        r.person,
        r.policy,
        Number(r.hits),
      ]),
    ).toEqual(want);
    expect(
      jsonTable(out, "access-policy-hits").rows.map((r) => [
        r.person,
        r.policy,
        Number(r.hits),
      ]),
    ).toEqual(want);
  });

  it("lists the detection hits whose activity is in the period, with the session's person", async () => {
    const [session] = await select<{
      id: string;
      user_key: string;
      resource: string;
    }>(
      f.w,
      `SELECT id, user_key, toString(resource_name) AS resource FROM {db}.sessions FINAL
       WHERE start_time >= fromUnixTimestamp64Milli({from:Int64}) AND start_time < fromUnixTimestamp64Milli({to:Int64})
       ORDER BY start_time LIMIT 1`,
      { from: FROM, to: TO },
    );
    if (!session) throw new Error("no session in the period");
    const hit = (key: string, sessionId: string, eventTimeMs: number) => ({
      ruleId: "report-test",
      hitKey: key,
      title: "Report test",
      severity: "high",
      attack: ["T1078"],
      tags: [],
      sessionId,
      sessionIds: sessionId ? [sessionId] : [],
      eventTimeMs,
      arrivedAtMs: eventTimeMs,
      detectedAtMs: eventTimeMs,
      fields: {},
      actor: "",
      historical: false,
      pages: true,
    });
    await insertHits(
      f.w,
      [
        hit(session.id, session.id, FROM + 3_600_000),
        hit("before", "", FROM - 3_600_000),
      ],
      { retries: 0 },
    );
    // A report of its own: the one the other tests share was written before these hits. The
    // CSV is what is read (every format renders the same table: "every kind" and the first
    // access-review test compare them).
    const { out } = await produce("access-review", { formats: ["csv"] });
    expect(
      csvRows(out, "access-detection-hits").filter(
        (r) => r.rule === "report-test",
      ),
    ).toEqual([
      {
        event_time: new Date(FROM + 3_600_000)
          .toISOString()
          .slice(0, 19)
          .replace("T", " "),
        rule: "report-test",
        title: "Report test",
        severity: "high",
        techniques: "T1078",
        person: session.user_key,
        system: session.resource,
        session_id: session.id,
        alert: "paged",
      },
    ]);
  });

  it("a filter keeps one person", async () => {
    const [top] = await select<{ person: string; n: string }>(
      f.w,
      `SELECT person, count() AS n FROM ${await sessionsWithPerson()}
       WHERE start_time >= fromUnixTimestamp64Milli({from:Int64}) AND start_time < fromUnixTimestamp64Milli({to:Int64})
       GROUP BY person ORDER BY n DESC, person LIMIT 1`,
      { from: FROM, to: TO },
    );
    const { out } = await produce("access-review", {
      filters: { user: top?.person ?? "" },
      formats: ["csv", "json"],
    });
    const rows = csvRows(out, "access-per-person");
    expect(rows.map((r) => [r.person, Number(r.sessions)])).toEqual([
      [top?.person, Number(top?.n)],
    ]);
  });
});

describe("sensitive-data-access", () => {
  it("events per label agree with the aggregation rows in ClickHouse", async () => {
    const { out } = await produce("sensitive-data-access", {
      formats: ["csv", "json", "html"],
    });
    const expected = await select<{ label: string; events: string }>(
      f.w,
      `SELECT key1 AS label, sum(count) AS events FROM {db}.agg_histogram FINAL
       WHERE job = 'data_labels_by_resource' AND level = 2 AND count > 0 AND key1 NOT IN ('none', '')
         AND bucket_time >= fromUnixTimestamp64Milli({from:Int64}) AND bucket_time < fromUnixTimestamp64Milli({to:Int64})
       GROUP BY label ORDER BY label`,
      { from: FROM, to: TO },
    );
    expect(expected.length).toBeGreaterThan(0);
    const want = expected.map((r) => [r.label, Number(r.events)]);
    const byLabel = (rows: (string | number)[][]) =>
      rows.sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(
      byLabel(
        csvRows(out, "sensitive-by-label").map((r) => [
          r.label ?? "",
          Number(r.events),
        ]),
      ),
    ).toEqual(want);
    expect(
      byLabel(
        jsonTable(out, "sensitive-by-label").rows.map((r) => [
          String(r.label),
          Number(r.events),
        ]),
      ),
    ).toEqual(want);
  });

  it("people and data labels agree with every session's labels in ClickHouse", async () => {
    const { out } = await defaultReport("sensitive-data-access");
    const keys = ["person", "label", "sessions", "resources", "last_access"];
    const row = (r: Record<string, unknown>) => keys.map((k) => String(r[k]));
    const sql = `SELECT person, label, count() AS sessions, uniqExact(resource_name) AS resources,
              formatDateTime(max(start_time), '%Y-%m-%d %H:%i:%S') AS last_access
       FROM ${await sessionsWithPerson()}
       ARRAY JOIN data_labels AS label
       WHERE start_time >= fromUnixTimestamp64Milli({from:Int64}) AND start_time < fromUnixTimestamp64Milli({to:Int64})
       GROUP BY person, label ORDER BY person, label`;
    const expected = await select<Record<string, string>>(f.w, sql, {
      from: FROM,
      to: TO,
    });
    expect(expected.length).toBeGreaterThan(10);
    expect(csvRows(out, "sensitive-by-person-label").map(row)).toEqual(
      expected.map(row),
    );
  });
});

describe("output", () => {
  it("the same data gives the same bytes; only the manifest's generation time differs", async () => {
    const a = await defaultReport("coverage-and-integrity");
    const b = await produce("coverage-and-integrity");
    const files = readdirSync(a.out).sort();
    expect(readdirSync(b.out).sort()).toEqual(files);
    for (const name of files) {
      expect(
        readFileSync(join(b.out, name)).equals(readFileSync(join(a.out, name))),
        name,
      ).toBe(true);
    }
  });

  it("a PDF asked for without Chromium fails, naming report.pdf, why and what to do, and writes nothing", async () => {
    const out = join(f.outDir, "no-chromium");
    const failed = await reportFrom(
      f.w,
      withConfig({ "reports.chromiumPath": "/nonexistent/chromium" }),
      {
        kind: "coverage-and-integrity",
        fromMs: FROM,
        toMs: TO,
        out,
        formats: ["html", "pdf", "json"],
        filters: {},
      },
    ).then(
      () => undefined,
      (err: unknown) => err as FatalError,
    );
    expect(failed?.code).toBe("REPORT_PDF_NOT_WRITTEN");
    expect(failed?.message).toMatch(
      /report\.pdf was asked for .* not written: .*\/nonexistent\/chromium .* not an executable/,
    );
    expect(failed?.hint).toMatch(/install Chromium .* --format html,csv,json/);
    expect(existsSync(out) ? readdirSync(out) : []).toEqual([]);
  });
});

describe("report verify", () => {
  it("passes as written, fails on a changed byte and on a manifest signed by another key", async () => {
    const keys = join(f.outDir, "keys");
    const mk = (name: string) => {
      const { privateKey, publicKey } = generateKeyPairSync("ed25519");
      writeFileSync(
        `${keys}-${name}.pem`,
        privateKey.export({ type: "pkcs8", format: "pem" }),
      );
      writeFileSync(
        `${keys}-${name}.pub`,
        publicKey.export({ type: "spki", format: "pem" }),
      );
    };
    mk("a");
    mk("b");
    const { out, written } = await produce("access-review", {
      config: withConfig({ "evidence.signingKeyFile": `${keys}-a.pem` }),
      formats: ["csv", "json", "html"],
    });
    expect(written.signed).toBe(true);
    const verify = (...extra: string[]) =>
      main(["node", "sessionhouse", "report", "verify", out, ...extra]);
    // Without a key the signature is named, and said to be unchecked.
    const said: string[] = [];
    const spy = vi.spyOn(process.stdout, "write").mockImplementation((s) => {
      said.push(String(s));
      return true;
    });
    try {
      expect(await verify()).toBe(0);
      expect(await verify("--public-key", `${keys}-a.pub`)).toBe(0);
    } finally {
      spy.mockRestore();
    }
    expect(said[0]).toMatch(
      /signed by Ed25519 key \S+\nnot checked: the signature, no public key given/,
    );
    expect(said[1]).toMatch(
      /signed by Ed25519 key \S+ \(the given public key\)\n$/,
    );
    expect(await verify("--public-key", `${keys}-a.pub`)).toBe(0);
    expect(await verify("--public-key", `${keys}-b.pub`)).toBe(1);
    expect(
      verifyEvidence(out, { publicKeyFile: `${keys}-b.pub` }).problems.join(
        "\n",
      ),
    ).toMatch(/not by the given public key/);
    const csv = join(out, "access-per-person.csv");
    const bytes = readFileSync(csv);
    bytes[bytes.length - 3] = (bytes[bytes.length - 3] ?? 0) ^ 1;
    writeFileSync(csv, bytes);
    expect(await verify()).toBe(1);
    expect(verifyEvidence(out).problems).toEqual([
      expect.stringMatching(/^access-per-person\.csv: SHA-256 is /),
    ]);
  });
});

describe("page one", () => {
  it("says when a window of the period is poisoned or skipped, and who skipped it and why", async () => {
    const at = (ms: number) =>
      new Date(ms).toISOString().slice(0, 19).replace("T", " ");
    await f.w.client.insert({
      table: `\`${f.w.database}\`.stream_windows`,
      format: "JSONEachRow",
      values: [
        {
          job: "logs_by_technology",
          window_start: at(FROM + 3_600_000),
          window_end: at(FROM + 7_200_000),
          state: "poisoned",
          attempts: 5,
          last_error: "BAD_RESPONSE: no aggregations",
          skipped_by: "",
          skip_reason: "",
          run_id: "r1",
          updated_at: "2030-01-01 00:00:00.000",
        },
        {
          job: "logs_by_technology",
          window_start: at(FROM + 7_200_000),
          window_end: at(FROM + 10_800_000),
          state: "skipped",
          attempts: 5,
          last_error: "",
          skipped_by: "alice",
          skip_reason: "API outage INC-42",
          run_id: "r2",
          updated_at: "2030-01-01 00:00:00.000",
        },
      ],
    });
    try {
      for (const kind of ["coverage-and-integrity", "access-review"] as const) {
        const { out } = await produce(kind, { formats: ["html", "pdf"] });
        const first = pdfText(out, [1, 1]).replace(/\s+/g, " ");
        expect(first).toContain("The record does not fully cover this report");
        expect(first).toMatch(
          /logs_by_technology window .* is poisoned after 5 attempts/,
        );
        expect(first).toMatch(/was skipped by alice \(API outage INC-42\)/);
      }
      // The checkpoints, windows and runs come from the status read model, and the manifest
      // names the SQL it ran: run again as recorded, each query answers the rows recorded.
      const { out } = await produce("coverage-and-integrity", {
        formats: ["json"],
      });
      const manifest = JSON.parse(
        readFileSync(join(out, "manifest.json"), "utf8"),
      ) as { queries: ManifestQuery[] };
      expect(manifest.queries.map((q) => q.id)).toEqual(
        expect.arrayContaining([
          "status.checkpoints",
          "status.windows",
          "status.run_counts",
          "status.failed_runs",
        ]),
      );
      for (const q of manifest.queries) {
        const rows = await f.w.client.query({
          query: q.sql,
          query_params: q.params,
          format: "JSONEachRow",
        });
        expect((await rows.json()).length, q.id).toBe(q.rows);
      }
      const windows = jsonTable(out, "coverage-windows").rows;
      expect(
        windows.map((r) => [r.state, r.window_start, r.skipped_by]),
      ).toEqual([
        ["poisoned", at(FROM + 3_600_000), ""],
        ["skipped", at(FROM + 7_200_000), "alice"],
      ]);
    } finally {
      await f.w.client.command({
        query: `ALTER TABLE \`${f.w.database}\`.stream_windows DELETE WHERE run_id IN ('r1', 'r2')`,
        clickhouse_settings: { mutations_sync: "2" },
      });
    }
  });

  it("says when the period reaches past a checkpoint or before the oldest record", async () => {
    const { out } = await produce("access-review", {
      fromMs: FROM - 30 * 86_400_000,
      toMs: TO + 86_400_000,
      formats: ["html", "pdf"],
    });
    const first = pdfText(out, [1, 1]).replace(/\s+/g, " ");
    expect(first).toMatch(
      /The stream sessions is complete only up to 2026-11-16 12:00:00 UTC; the period ends at 2026-11-17 12:00:00/,
    );
    expect(first).toMatch(
      /The oldest stored session started at .* after the period starts/,
    );
  });

  it("a covered period says so", async () => {
    const { out } = await defaultReport("access-review");
    expect(pdfText(out, [1, 1]).replace(/\s+/g, " ")).toContain(
      "The record covers the whole period",
    );
  });
});

describe("policy-exceptions", () => {
  it("lists a suspension in force and the sessions under it; without the stream, page one says it is not exported", async () => {
    const has = async () =>
      Number(
        (
          await select<{ n: string }>(
            f.w,
            `SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name = 'policy_suspensions'`,
            { db: f.w.database },
          )
        )[0]?.n,
      ) === 1;
    if (await has()) {
      const [s] = await select<{ user_id: string; n: string }>(
        f.w,
        `SELECT user_id, count() AS n FROM {db}.sessions FINAL
         WHERE user_id != '' AND start_time >= fromUnixTimestamp64Milli({from:Int64}) AND start_time < fromUnixTimestamp64Milli({to:Int64})
         GROUP BY user_id ORDER BY n DESC, user_id LIMIT 1`,
        { from: FROM, to: TO },
      );
      const at = (ms: number) =>
        new Date(ms).toISOString().slice(0, 23).replace("T", " ");
      await f.w.client.insert({
        table: `\`${f.w.database}\`.policy_suspensions`,
        format: "JSONEachRow",
        values: [
          {
            id: "sus-1",
            policy_id: "pol-masking",
            org_id: "org",
            identity_type: "user",
            identity_id: s?.user_id ?? "",
            created_by: "carol@example.com",
            request_id: "REQ-7",
            suspension_type: "temporary",
            input_condition: "",
            expire_at: null,
            created_at: at(FROM - 86_400_000),
            updated_at: at(FROM - 86_400_000),
            content_hash: "h1",
            observed_at: at(FROM),
            raw: "{}",
          },
        ],
      });
      // The CSV and JSON are what is read here; page one's PDF is read below.
      const { out } = await produce("policy-exceptions", {
        formats: ["csv", "json"],
      });
      const ours = csvRows(out, "policy-suspensions").filter(
        (r) => r.id === "sus-1",
      );
      expect(
        ours.map((r) => [
          r.identity_id,
          r.created_by,
          r.request_id,
          r.still_active,
        ]),
      ).toEqual([[s?.user_id, "carol@example.com", "REQ-7", "true"]]);
      const under = (rows: Record<string, unknown>[]) =>
        rows.filter((r) => r.suspension_id === "sus-1");
      expect(
        under(csvRows(out, "policy-sessions-under-suspensions")),
      ).toHaveLength(Number(s?.n));
      expect(
        under(jsonTable(out, "policy-sessions-under-suspensions").rows),
      ).toHaveLength(Number(s?.n));
      await f.w.client.command({
        query: `DROP TABLE \`${f.w.database}\`.policy_suspensions`,
      });
    }
    const { out } = await produce("policy-exceptions", {
      formats: ["html", "pdf", "json"],
    });
    const first = pdfText(out, [1, 1]).replace(/\s+/g, " ");
    expect(first).toContain(
      "The policy suspensions stream (policy_suspensions) is not exported to this warehouse",
    );
    expect(jsonTable(out, "policy-suspensions").notExported).toEqual([
      "policy_suspensions",
    ]);
    expect(pdfText(out).replace(/\s+/g, " ")).toContain(
      "Not in this report: policy_suspensions is not exported",
    );
  });
});

describe("scheduled in run", () => {
  it("writes the previous period's report once per period, and records the run", async () => {
    const out = join(f.outDir, "scheduled");
    const config = withConfig({
      "reports.schedules": [
        {
          kind: "coverage-and-integrity",
          cron: "0 6 * * *",
          range: "previous-day",
          format: ["html", "csv", "json"],
          out,
        },
      ],
    });
    const logger = createLogger({ level: "silent" });
    const api = ControlPlaneApi.fromConfig(config, logger);
    // The tick at 06:00 on the day after the fixture's period ends.
    const jobs = reportJobs(
      { config, api, warehouse: f.w, logger },
      () => TO + 18 * 3_600_000,
    );
    expect(jobs.map((j) => [j.name, j.schedule])).toEqual([
      ["report.coverage-and-integrity", "0 6 * * *"],
    ]);
    const control = {
      signal: new AbortController().signal,
      stopping: new AbortController().signal,
    };
    await jobs[0]?.run(control);
    const dir = join(out, "coverage-and-integrity-2026-11-16-to-2026-11-17");
    expect(readdirSync(out)).toEqual([
      "coverage-and-integrity-2026-11-16-to-2026-11-17",
    ]);
    const first = readFileSync(join(dir, "manifest.json"));
    await jobs[0]?.run(control);
    expect(readFileSync(join(dir, "manifest.json")).equals(first)).toBe(true);
    expect(verifyEvidence(dir).problems).toEqual([]);
    const runs = await select<{ status: string }>(
      f.w,
      `SELECT status FROM {db}.runs FINAL WHERE job = 'report.coverage-and-integrity' ORDER BY started_at`,
    );
    expect(runs.map((r) => r.status)).toEqual(["succeeded", "succeeded"]);
    await api.close();
  });
});

describe("beside a running service", () => {
  it("reads through the service's read-only access when it holds the data directory", async () => {
    if (f.w.kind !== "embedded") return;
    const reads = await startReadAccess({
      dataDir: f.w.location,
      database: f.w.database,
      host: "127.0.0.1",
      port: 0,
      maxExecutionTimeS: 60,
      maxMemoryUsage: 2 ** 30,
      maxResultRows: 1_000_000,
      maxResultBytes: 2 ** 30,
    });
    try {
      const config = withConfig({});
      // The service file names another live process (this one's parent), as it would for a
      // `sessionhouse run` beside the report command: a process does not read through itself.
      const record = JSON.parse(readFileSync(reads.file, "utf8")) as {
        pid: number;
      };
      writeFileSync(
        reads.file,
        JSON.stringify({ ...record, pid: process.ppid }),
        { mode: 0o600 },
      );
      const seen = await openWarehouse(config, { access: "read" });
      expect(seen.service?.pid).toBe(process.ppid);
      await seen.close();
      const out = join(f.outDir, "through-service");
      const written = await reportWithReadAccess(config, {
        kind: "access-review",
        fromMs: FROM,
        toMs: TO,
        out,
        formats: ["csv", "json"],
        filters: {},
        generatedAtMs: 0,
      });
      expect(written.files).toContain("access-per-person.csv");
      const direct = await defaultReport("access-review");
      expect(readFileSync(join(out, "access-per-person.csv"))).toEqual(
        readFileSync(join(direct.out, "access-per-person.csv")),
      );
    } finally {
      rmSync(reads.file, { force: true });
      await reads.close();
    }
  });
});
