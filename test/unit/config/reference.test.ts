// docs/configuration.md's reference of every setting is generated from the configuration schema
// (src/config/schema.ts): each key, the environment variable the loader reads for it
// (src/config/load.ts) and its default as the loaded configuration has it. The committed page
// must be what this generates; `node scripts/config-reference.mjs` writes it.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { format } from "prettier";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  configSchema,
  defaultAggregationJobs,
  loadSettingsReport,
} from "../../../src/config/index.js";
import { parseDurationMs } from "../../../src/util/duration.js";
import { envNamesTheLoaderReads } from "../../helpers/config-env.js";
import { REPO_ROOT } from "../../helpers/dashboards.js";

const PAGE = join(REPO_ROOT, "docs/configuration.md");
const BEGIN =
  "<!-- The reference below is generated from src/config/schema.ts by `node scripts/config-reference.mjs`; test/unit/config/reference.test.ts fails when it differs. -->";
const END = "<!-- End of the generated reference. -->";

/** The schema under the wrappers that leave the keys a value may hold as they are. */
function unwrap(s: z.ZodType): z.ZodType {
  if (
    s instanceof z.ZodDefault ||
    s instanceof z.ZodPrefault ||
    s instanceof z.ZodOptional ||
    s instanceof z.ZodNullable
  )
    return unwrap(s.def.innerType as z.ZodType);
  return s;
}

/** The dotted path of every setting (a key whose value is not a mapping of keys), in order. */
function settingPaths(s: z.ZodType, path: readonly string[] = []): string[] {
  const u = unwrap(s);
  if (!(u instanceof z.ZodObject)) return [path.join(".")];
  return Object.entries(u.shape as Record<string, z.ZodType>).flatMap(
    ([key, member]) => settingPaths(member, [...path, key]),
  );
}

function valueAt(tree: unknown, path: string): unknown {
  let node = tree;
  for (const key of path.split("."))
    node =
      typeof node === "object" && node !== null
        ? (node as Record<string, unknown>)[key]
        : undefined;
  return node;
}

const UNITS: readonly (readonly [string, number])[] = [
  ["d", 86_400_000],
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1000],
];

/** A duration as the page writes it (and the configuration reads it back): `6h`, `500ms`. */
function duration(ms: number): string {
  const [unit, size] = UNITS.find(([, n]) => ms !== 0 && ms % n === 0) ?? [
    "ms",
    1,
  ];
  const text = `${ms / size}${unit}`;
  expect(parseDurationMs(text)).toBe(ms);
  return text;
}

/** A setting's default as the page shows it. */
function shown(path: string, value: unknown): string {
  if (path === "api.url" || path === "api.apiKey") return "required";
  if (path === "aggregations.jobs") {
    expect(value).toEqual(defaultAggregationJobs());
    return "the default jobs (`src/config/jobs.ts`)";
  }
  if (value === "") return "empty";
  if (value === undefined || value === null) return "none";
  if (typeof value === "number" && path.endsWith("Ms"))
    return `\`${duration(value)}\``;
  if (typeof value !== "object")
    return `\`${JSON.stringify(value).replace(/^"|"$/g, "")}\``;
  return Object.keys(value).length === 0
    ? "none"
    : `\`${JSON.stringify(value)}\``;
}

/** The generated reference: one row per setting. */
function reference(): string {
  const { config, settings } = loadSettingsReport({ env: {} });
  const variables = new Map<string, string[]>();
  for (const s of settings)
    variables.set(s.setting, [...(variables.get(s.setting) ?? []), s.variable]);
  // The one variable the loader reads that is no setting's own: the file holding the API key.
  const others = [...envNamesTheLoaderReads()].filter(
    (name) => !settings.some((s) => s.variable === name),
  );
  expect(others).toEqual(["SESSIONHOUSE_API_KEY_FILE"]);
  variables.get("api.apiKey")?.push("SESSIONHOUSE_API_KEY_FILE");
  const rows = settingPaths(configSchema).map((path) => {
    const names = variables.get(path) ?? [];
    variables.delete(path);
    const env =
      names.length === 0 ? "—" : names.map((n) => `\`${n}\``).join(", ");
    return `| \`${path}\` | ${env} | ${shown(path, valueAt(config, path))} |`;
  });
  // Every variable is some setting's.
  expect([...variables.keys()]).toEqual([]);
  return [
    BEGIN,
    "",
    "| key | variable | default |",
    "| --- | --- | --- |",
    ...rows,
    "",
    END,
  ].join("\n");
}

describe("docs/configuration.md", () => {
  it("holds the reference of every setting the schema generates: key, variable, default", async () => {
    const page = readFileSync(PAGE, "utf8");
    const from = page.indexOf(BEGIN);
    const to = page.indexOf(END);
    const body =
      from < 0 || to < from
        ? `${page.trimEnd()}\n\n## Every setting\n\n${reference()}\n`
        : `${page.slice(0, from)}${reference()}${page.slice(to + END.length)}`;
    const expected = await format(body, { parser: "markdown" });
    if (process.env.UPDATE_CONFIG_REFERENCE === "1") {
      writeFileSync(PAGE, expected);
      return;
    }
    expect(
      page,
      "docs/configuration.md differs from the schema: run node scripts/config-reference.mjs and read the diff",
    ).toBe(expected);
  });

  it("says what every variable the loader reads and every setting only a file holds is for", () => {
    const page = readFileSync(PAGE, "utf8");
    const described = page.slice(0, page.indexOf(BEGIN));
    const { settings } = loadSettingsReport({ env: {} });
    expect(
      [...envNamesTheLoaderReads()].filter(
        (name) => !described.includes(`\`${name}\``),
      ),
    ).toEqual([]);
    const fileOnly = settingPaths(configSchema).filter(
      (path) => !settings.some((s) => s.setting === path),
    );
    expect(fileOnly).toContain("api.maxRetries");
    expect(
      fileOnly.filter(
        (path) =>
          !described.includes(`${path.slice(path.lastIndexOf(".") + 1)}\``),
      ),
    ).toEqual([]);
  });
});
