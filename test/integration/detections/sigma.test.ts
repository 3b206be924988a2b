// The Sigma subset on the real engine: each construct as a rule whose fixtures must fire and
// must not, stored and evaluated as `detect test` does (case-insensitive matching by default,
// wildcards, the modifiers, selection patterns, aggregations, field names of other taxonomies).
import { mkdtempSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ControlPlaneApi } from "../../../src/api/control-plane.js";
import type { Config } from "../../../src/config/index.js";
import { runFixture } from "../../../src/detections/fixtures.js";
import { loadRules } from "../../../src/detections/rule.js";
import { withRun } from "../../../src/pipeline/context.js";
import { createLogger } from "../../../src/util/logger.js";
import type { Warehouse } from "../../../src/warehouse/client.js";
import { migratedWarehouse, testConfig } from "../../helpers/warehouse.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

let config: Config;
let w: Warehouse;

beforeAll(async () => {
  config = await testConfig();
  w = await migratedWarehouse(config);
}, 60_000);

afterAll(async () => {
  await w.close();
});

/** A Sigma detection and sessions (as YAML flow mappings) it must fire on and must not. */
interface Case {
  detection: string;
  fires: string[][];
  quiet: string[][];
}

const fixture = (name: string, fires: boolean, sessions: string[]) =>
  `  - name: ${name}\n    fires: ${fires}\n    sessions:\n${sessions.map((s) => `      - ${s}`).join("\n")}`;

async function outcomes(
  c: Case,
): Promise<{ name: string; passed: boolean; hits: number }[]> {
  const dir = mkdtempSync(join(testTmpDir(), "detect-sigma-"));
  writeFileSync(
    join(dir, "r.yaml"),
    `id: case
title: case
description: case
severity: low
owner: tests
sigma:
  logsource: { product: sessionhouse, category: database }
  detection:
${c.detection
  .trim()
  .split("\n")
  .map((l) => `    ${l}`)
  .join("\n")}
fixtures:
${[...c.fires.map((s, i) => fixture(`fires ${i}`, true, s)), ...c.quiet.map((s, i) => fixture(`quiet ${i}`, false, s))].join("\n")}
`,
  );
  const [rule] = loadRules([dir]);
  if (!rule) throw new Error("no rule");
  const api = ControlPlaneApi.fromConfig(config);
  try {
    return await withRun(
      { config, api, warehouse: w, logger: createLogger({ level: "silent" }) },
      "test.sigma",
      async (ctx) => {
        const out = [];
        for (let i = 0; i < rule.fixtures.length; i++) {
          const o = await runFixture(ctx, rule, i);
          out.push({ name: o.fixture.name, passed: o.passed, hits: o.hits });
        }
        return out;
      },
    );
  } finally {
    await api.close();
  }
}

const ip = (a: string) => `{ network: { clientIpAddress: "${a}" } }`;
const resource = (name: string) => `{ resource: { name: "${name}" } }`;

const CASES: Record<string, Case> = {
  "equality ignores case, `cased` does not": {
    detection:
      "a:\n  database.name: Orders-DB\nb:\n  database.name|cased: Orders-DB\ncondition: a and not b",
    fires: [[resource("orders-db")]],
    quiet: [[resource("Orders-DB")], [resource("orders-db-2")]],
  },
  "a list is any of its values, `all` every one": {
    detection:
      "a:\n  database.name: [x-db, orders-db]\nb:\n  actor.user.groups.name|all: [analysts, admins]\ncondition: a and not b",
    fires: [[resource("orders-db")]],
    quiet: [
      [resource("y-db")],
      ["{ user: { formal: { user: { groups: [analysts, admins] } } } }"],
    ],
  },
  "wildcards, contains, startswith, endswith": {
    detection:
      "a:\n  database.name: 'ord?rs-*'\nb:\n  database.name|contains: PROD\nc:\n  database.name|startswith: pay\nd:\n  database.name|endswith: '-dw'\ncondition: a or b or c or d",
    fires: [
      [resource("orders-x")],
      [resource("x-prod-y")],
      [resource("payroll")],
      [resource("sales-dw")],
    ],
    quiet: [[resource("order-x")], [resource("sales-dwh")]],
  },
  "a literal star and the escapes of LIKE": {
    detection: "a:\n  database.name: 'a\\*b_%'\ncondition: a",
    fires: [[resource("a*b_%")]],
    quiet: [[resource("axb_%")], [resource("a*bc%")]],
  },
  "re and cidr (IPv4 and IPv6)": {
    detection:
      "a:\n  user.name|re: '^svc_[0-9]+$'\nb:\n  src_endpoint.ip|cidr: [198.51.100.0/24, '2001:db8::/32']\ncondition: a or b",
    fires: [
      ["{ user: { native: { username: svc_12 } } }"],
      [ip("198.51.100.7")],
      [ip("2001:db8::5")],
    ],
    quiet: [
      ["{ user: { native: { username: svc_x } } }"],
      [ip("198.51.101.7")],
      [ip("")],
    ],
  },
  "exists and null": {
    detection:
      "a:\n  user.name|exists: false\nb:\n  dst_endpoint.ip: null\ncondition: a and b",
    fires: [
      [
        '{ user: { username: "", native: { username: "" } }, network: { clientIpAddress: 10.0.0.1, serverIpAddress: "" } }',
      ],
    ],
    quiet: [
      ['{ network: { clientIpAddress: 10.0.0.1, serverIpAddress: "" } }'],
    ],
  },
  "1 of a pattern, all of them, parentheses and not": {
    detection:
      "sel_a:\n  database.name: a-db\nsel_b:\n  database.name: b-db\nhuman:\n  actor.user.type: User\ncondition: (1 of sel_*) and not (all of them)",
    fires: [[resource("a-db")], [resource("b-db")]],
    quiet: [[resource("c-db")]],
  },
  "fields of other taxonomies are the OCSF fields they map onto": {
    detection:
      "zeek:\n  id.orig_h|cidr: 198.51.100.0/24\nfirewall:\n  dst_ip: 10.9.9.9\nwindows:\n  TargetUserName: sa\ncondition: zeek or firewall or windows",
    fires: [
      [ip("198.51.100.7")],
      ['{ network: { serverIpAddress: "10.9.9.9" } }'],
      ["{ user: { native: { username: SA } } }"],
    ],
    quiet: [[ip("198.51.101.7")]],
  },
  "a session is what a Windows security log records of a successful network logon":
    {
      detection:
        "logon:\n  EventID: 4624\n  LogonType: 3\nfailed:\n  EventID: 4625\nrdp:\n  LogonType: 10\nnone:\n  IpAddress: '-'\ncondition: logon and not (failed or rdp or none)",
      fires: [[ip("203.0.113.9")], [ip("10.0.0.1")]],
      quiet: [[ip("")]],
    },
  "count() by a field of another taxonomy": {
    detection:
      "a:\n  database.name: orders-db\ntimeframe: 5m\ncondition: a | count(TargetUserName) by src_ip > 1",
    fires: [
      [
        `{ startTime: "2026-01-05T10:00:00Z", user: { native: { username: u1 } } }`,
        `{ startTime: "2026-01-05T10:01:00Z", user: { native: { username: u2 } } }`,
      ],
    ],
    quiet: [
      [
        `{ startTime: "2026-01-05T10:00:00Z", user: { native: { username: u1 } } }`,
        `{ startTime: "2026-01-05T10:01:00Z", user: { native: { username: u1 } } }`,
      ],
    ],
  },
  "count() by a field over a timeframe": {
    detection:
      "a:\n  database.name: orders-db\ntimeframe: 5m\ncondition: a | count() by src_endpoint.ip > 2",
    fires: [[0, 1, 2].map((i) => `{ startTime: "2026-01-05T10:0${i}:00Z" }`)],
    quiet: [
      [0, 1].map((i) => `{ startTime: "2026-01-05T10:0${i}:00Z" }`),
      [3, 4, 6].map((i) => `{ startTime: "2026-01-05T10:0${i}:00Z" }`),
    ],
  },
  "count(field) counts distinct values": {
    detection:
      "a:\n  database.type: postgres\ntimeframe: 1h\ncondition: a | count(database.name) by actor.user.email_addr >= 2",
    fires: [
      [
        `{ startTime: "2026-01-05T10:00:00Z" }`,
        `{ startTime: "2026-01-05T10:10:00Z", resource: { name: other-db } }`,
      ],
    ],
    quiet: [
      [
        `{ startTime: "2026-01-05T10:00:00Z" }`,
        `{ startTime: "2026-01-05T10:10:00Z" }`,
      ],
    ],
  },
};

describe("Sigma rules on the engine", () => {
  it.each(Object.entries(CASES))("%s", async (_name, c) => {
    const results = await outcomes(c);
    expect(results.filter((r) => !r.passed)).toEqual([]);
    expect(results).toHaveLength(c.fires.length + c.quiet.length);
  });
});
