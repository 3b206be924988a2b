// Drill-down data links: a user, resource, group, connector or client IP shown in a table opens
// the dashboard that investigates it, with the same time range and that value chosen.
//
// How the value travels: a query variable's value is encodeURLComponent(text) (schema.test.ts),
// and Grafana decodes a `var-NAME=` URL parameter once. `${__value.raw:percentencode}` would
// therefore hand the variable the text itself, which is not an option (allowCustomValue is false)
// as soon as it holds anything encodeURLComponent changes. So each linked column `C` comes with
// a hidden column `C_url` = encodeURLComponent(C), computed by ClickHouse exactly as the target
// variable computes its values, and the link percent-encodes that once more with
// `${__data.fields.C_url:percentencode}`: the URL decodes back to encodeURLComponent(C).
// A session id opens Session detail, whose `session_id` is a textbox holding the id itself (its
// queries read it percent-encoded): the link carries `${__data.fields.C:percentencode}`.
import { describe, expect, it } from "vitest";
import {
  loadDashboards,
  queryVariables,
  valueVariables,
} from "../../helpers/dashboards.js";

const dashboards = loadDashboards();
const byUid = new Map(dashboards.map((d) => [d.dashboard.uid, d.dashboard]));

/** Columns that name something another dashboard investigates, and the variable it sets. */
const LINKED: Record<string, { uid: string; variable: string }> = {
  user: { uid: "sessionhouse-who-accessed-what", variable: "user" },
  resource: { uid: "sessionhouse-who-accessed-what", variable: "resource" },
  mcp_resource: { uid: "sessionhouse-who-accessed-what", variable: "resource" },
  user_group: { uid: "sessionhouse-who-accessed-what", variable: "group" },
  connector_name: {
    uid: "sessionhouse-sessions-overview",
    variable: "connector",
  },
  client_ip_address: {
    uid: "sessionhouse-sessions-overview",
    variable: "client_ip",
  },
  session_id: { uid: "sessionhouse-session-detail", variable: "session_id" },
  parent_session_id: {
    uid: "sessionhouse-session-detail",
    variable: "session_id",
  },
};

interface Link {
  title: string;
  url: string;
}
interface Override {
  matcher: { id: string; options: string };
  properties: { id: string; value: unknown }[];
}

/** The columns of a query's SELECT list, by alias or plain column name. */
function columns(sql: string): string[] {
  const select = sql.slice(0, sql.indexOf("\nFROM"));
  return [
    ...select.matchAll(/(?:AS (\w+)|^(?:SELECT )?\s*(\w+))(?:,|$)/gm),
  ].map((m) => m[1] ?? m[2] ?? "");
}

/** Grafana's percentencode format (encodeURIComponentStrict). */
const percentencode = (s: string) =>
  encodeURIComponent(s).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );

const panels = dashboards.flatMap(({ file, dashboard }) =>
  dashboard.panels.map((panel) => ({ file, panel })),
);

function linksOf(panel: (typeof panels)[number]["panel"]) {
  const out: { field: string | undefined; link: Link }[] = [];
  const defaults = panel.fieldConfig.defaults as { links?: Link[] };
  for (const link of defaults.links ?? []) out.push({ field: undefined, link });
  for (const o of panel.fieldConfig.overrides as Override[])
    for (const p of o.properties)
      if (p.id === "links")
        for (const link of p.value as Link[])
          out.push({ field: o.matcher.options, link });
  return out;
}

describe("data links", () => {
  it("exist", () => {
    expect(
      panels.flatMap(({ panel }) => linksOf(panel)).length,
    ).toBeGreaterThan(0);
  });

  describe.each(panels.map((p) => [`${p.file}: ${p.panel.title}`, p] as const))(
    "%s",
    (_name, { panel }) => {
      const sql = panel.targets.map((t) => t.rawSql).join("\n");
      const cols = panel.targets.flatMap((t) => columns(t.rawSql));
      const overrides = panel.fieldConfig.overrides as Override[];

      it("links to an existing dashboard, its variables and the time range", () => {
        for (const { field, link } of linksOf(panel)) {
          const m =
            /^\/d\/([\w-]+)\?\$\{__url_time_range\}((?:&var-\w+=[^&]+)+)$/.exec(
              link.url,
            );
          expect(m, link.url).not.toBeNull();
          const target = byUid.get(m?.[1] ?? "");
          expect(target, link.url).toBeDefined();
          if (!target) continue;
          const names = new Set(queryVariables(target).map((v) => v.name));
          const typed = new Set(valueVariables(target).map((v) => v.name));
          for (const [, name, value] of (m?.[2] ?? "").matchAll(
            /&var-(\w+)=([^&]+)/g,
          )) {
            if (typed.has(name ?? "")) {
              // A textbox holds the text itself (its queries percent-encode it): the URL carries
              // the value percent-encoded once, and Grafana decodes it back.
              expect(value).toBe(`\${__data.fields.${field}:percentencode}`);
              expect(cols, `${field} is a column`).toContain(field);
              continue;
            }
            expect(names.has(name ?? ""), `${link.url}: ${name}`).toBe(true);
            // The value is the hidden encoded column of the linked field, percent-encoded once.
            expect(value).toBe(`\${__data.fields.${field}_url:percentencode}`);
            expect(sql).toContain(
              `encodeURLComponent(${field}) AS ${field}_url`,
            );
            expect(
              overrides.some(
                (o) =>
                  o.matcher.id === "byName" &&
                  o.matcher.options === `${field}_url` &&
                  o.properties.some(
                    (p) => p.id === "custom.hidden" && p.value === true,
                  ),
              ),
              `${field}_url is hidden`,
            ).toBe(true);
          }
        }
      });

      // Only a table has columns to link (a chart has none, so it gets no test rather than a skipped one).
      if (panel.type === "table")
        it("links every user, resource, group, connector and client IP column", () => {
          const links = linksOf(panel);
          for (const col of cols.filter((c) => c in LINKED)) {
            const want = LINKED[col];
            const link = links.find((l) => l.field === col)?.link;
            expect(link, col).toBeDefined();
            expect(link?.url, col).toContain(`/d/${want?.uid}?`);
            expect(link?.url, col).toContain(`&var-${want?.variable}=`);
          }
        });
    },
  );

  it("hand the target variable encodeURLComponent(value) after Grafana decodes the URL once", () => {
    // What ClickHouse's encodeURLComponent gives (letters, digits and -._~ kept), for values
    // quoting.test.ts runs with; Grafana's URL parsing is one decodeURIComponent per parameter.
    for (const [text, encoded] of [
      ["CORP\\alice", "CORP%5Calice"],
      ["o'brien", "o%27brien"],
      ["a b&c=d", "a%20b%26c%3Dd"],
      ["ünï", "%C3%BCn%C3%AF"],
    ] as const) {
      const url = `var-user=${percentencode(encoded)}`;
      expect(decodeURIComponent(url.slice("var-user=".length))).toBe(encoded);
      // Linking the text itself would give the variable the text, not an option's value.
      expect(decodeURIComponent(percentencode(text))).not.toBe(encoded);
    }
  });
});
