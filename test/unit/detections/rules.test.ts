// The rule files: the shipped set loads and is what the brief of a detection set asks (one id
// each, ATT&CK ids, fixtures both ways, adapted public Sigma rules that keep their attribution
// and the published text but for the logsource);
// a bad rule is refused naming its file, its rule and the line; the Sigma subset refuses what it
// does not support the same way; the committed Grafana provisioning is the compiler's output.
import { rulePages } from "../../../src/detections/history.js";
import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  ALERT_RULES_FILE,
  compileAlertRules,
} from "../../../src/detections/grafana.js";
import { ruleSql } from "../../../src/detections/query.js";
import { loadRules, SHIPPED_RULES_DIR } from "../../../src/detections/rule.js";
import { REPO_ROOT } from "../../helpers/dashboards.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

const shipped = loadRules([SHIPPED_RULES_DIR]);

/** The logsource an adapted public rule is given. */
const OUR_LOGSOURCE =
  "logsource:\n    product: sessionhouse\n    category: database\n";
/** Each adapted public rule's published logsource and git blob id in SigmaHQ/sigma. */
const PUBLISHED: Readonly<Record<string, { logsource: string; blob: string }>> =
  {
    "zeek_rdp_public_listener.yml": {
      logsource: "logsource:\n    product: zeek\n    service: rdp\n",
      blob: "225b22f90c1ebf204952671251beeb70818b8b24",
    },
    "net_firewall_apt_equationgroup_c2.yml": {
      logsource: "logsource:\n    category: firewall\n",
      blob: "e5098c8fba34e5513927f638da4158c053217a0f",
    },
    "win_security_successful_external_remote_smb_login.yml": {
      logsource: "logsource:\n    product: windows\n    service: security\n",
      blob: "6257c27a946e608f22f0b7b54cf42844f646d37f",
    },
  };

/** Loads one rule written to a file of its own; returns the error's message (or "" when none). */
function problemOf(text: string, name = "rule.yaml"): string {
  const dir = mkdtempSync(join(testTmpDir(), "detect-rule-"));
  writeFileSync(join(dir, name), text);
  try {
    const [rule] = loadRules([dir]);
    if (rule) ruleSql(rule, "db", "arrived");
    return "";
  } catch (err) {
    return (err as Error).message;
  }
}

const HEAD = `id: r1
title: T
description: D
severity: high
attack: [T1078]
owner: me
`;
const FIXTURES = `fixtures:
  - { name: fires, fires: true, sessions: [{}] }
  - { name: quiet, fires: false }
`;
const sigma = (detection: string) =>
  `${HEAD}sigma:
  logsource: { product: sessionhouse }
  detection:
${detection
  .split("\n")
  .map((l) => `    ${l}`)
  .join("\n")}
${FIXTURES}`;

describe("the shipped rules", () => {
  it("are at least twelve, each with fixtures that fire and fixtures that do not", () => {
    expect(shipped.length).toBeGreaterThanOrEqual(12);
    expect(new Set(shipped.map((r) => r.id)).size).toBe(shipped.length);
    for (const r of shipped) {
      expect(
        r.fixtures.some((f) => f.fires),
        r.id,
      ).toBe(true);
      expect(
        r.fixtures.some((f) => !f.fires),
        r.id,
      ).toBe(true);
      for (const t of r.attack) expect(t).toMatch(/^T\d{4}(\.\d{3})?$/);
    }
  });

  it("adapt public Sigma rules as published but for the logsource, naming the source rule and its licence", () => {
    const adapted = shipped.filter(
      (r) => r.logic.kind === "sigma" && /DRL\) 1\.1/.test(r.source ?? ""),
    );
    expect(adapted.map((r) => r.id).sort()).toEqual(
      [
        "equation-group-c2",
        "external-address-session",
        "public-address-logon",
      ].sort(),
    );
    for (const r of adapted) {
      const m =
        /id ([0-9a-f-]{36}), SigmaHQ\/sigma\s+(rules[a-z-]*\/\S+\.yml)/.exec(
          r.source ?? "",
        );
      expect(m, r.id).not.toBeNull();
      if (r.logic.kind !== "sigma" || !m) continue;
      // The published file, kept in a file of its own under detections/sigma/.
      const file = r.logic.src.file;
      expect(dirname(file)).toBe(join(SHIPPED_RULES_DIR, "sigma"));
      const upstream = PUBLISHED[basename(file)];
      expect(upstream, file).toBeDefined();
      if (!upstream) continue;
      expect(basename(m[2] ?? "")).toBe(basename(file));
      // Put back the published logsource: the bytes are the published file's (its git blob id
      // in SigmaHQ/sigma), so the logsource is all that changed.
      const text = readFileSync(file, "utf8");
      expect(text).toContain(OUR_LOGSOURCE);
      const published = Buffer.from(
        text.replace(OUR_LOGSOURCE, upstream.logsource),
      );
      const blob = createHash("sha1")
        .update(`blob ${published.length}\0`)
        .update(published)
        .digest("hex");
      expect(blob, file).toBe(upstream.blob);
      expect(text).toContain(`id: ${m[1]}`);
    }
  });

  it("compile to the committed Grafana provisioning file, one alert per rule that pages and none for a hunting rule", () => {
    const committed = readFileSync(
      join(REPO_ROOT, "dashboards/provisioning/alerting", ALERT_RULES_FILE),
      "utf8",
    );
    expect(committed).toBe(compileAlertRules(shipped));
    for (const r of shipped)
      if (rulePages(r)) expect(committed).toContain(`uid: det-${r.id}\n`);
      else expect(committed).not.toContain(`uid: det-${r.id}\n`);
    // The hunting rules that fire on every office's public address page nobody.
    for (const id of ["external-address-session", "public-address-logon"])
      expect(committed).not.toContain(`det-${id}`);
    expect(shipped.filter(rulePages).length).toBeGreaterThan(0);
  });
});

describe("a rule that cannot be used", () => {
  it("is refused naming the file, the rule, the member and its line", () => {
    const msg = problemOf(
      `${HEAD.replace("severity: high", "severity: urgent")}sql: SELECT 1 FROM {{sessions}}\n${FIXTURES}`,
    );
    expect(msg).toMatch(/rule\.yaml:4: rule r1: severity: /);
  });

  it("with an ATT&CK id of the wrong form is refused at its line", () => {
    expect(
      problemOf(
        `${HEAD.replace("[T1078]", "\n  - T1078\n  - TA0001")}sql: x {{sessions}}\n${FIXTURES}`,
      ),
    ).toMatch(
      /rule\.yaml:7: rule r1: attack\.1: an ATT&CK technique id looks like T1078 or T1078\.003/,
    );
  });

  it("without fixtures that do not fire is refused", () => {
    expect(
      problemOf(
        `${HEAD}sql: x {{sessions}}\nfixtures:\n  - { name: a, fires: true }\n  - { name: b, fires: true }\n`,
      ),
    ).toMatch(
      /rule r1: fixtures: fixtures need at least one that fires and one that does not/,
    );
  });

  it("whose SQL reads no window is refused", () => {
    expect(problemOf(`${HEAD}sql: SELECT 1\n${FIXTURES}`)).toMatch(
      /rule r1: its sql reads neither \{\{sessions\}\}/,
    );
  });

  it("that is not YAML is refused at the line", () => {
    expect(problemOf(`${HEAD}sql: [unclosed\n`)).toMatch(
      /rule\.yaml:\d+: not valid YAML/,
    );
  });

  it("whose Sigma rule is a block of text is refused at its line, not read as a path", () => {
    const block = `${HEAD}sigma: |\n  logsource: { product: sessionhouse }\n  detection:\n${"    a: { database.name: x }\n".repeat(200)}    condition: a\n${FIXTURES}`;
    expect(problemOf(block)).toMatch(
      /rule\.yaml:7: rule r1: sigma: a block of text \(sigma: \|\) is neither a Sigma rule nor the path of one$/,
    );
  });

  it("whose Sigma path cannot be read is refused at its line, naming the path", () => {
    expect(problemOf(`${HEAD}sigma: sigma/missing.yml\n${FIXTURES}`)).toMatch(
      /rule\.yaml:7: rule r1: sigma: cannot read the Sigma rule \S+\/sigma\/missing\.yml: ENOENT$/,
    );
  });
});

describe("the Sigma subset", () => {
  it.each([
    [
      "keyword search",
      "keywords:\n  - drop\ncondition: keywords",
      /:11: rule r1: keyword search .* is not supported/,
    ],
    [
      "an unknown modifier",
      "selection:\n  database.name|base64: x\ncondition: selection",
      /:11: rule r1: Sigma modifier `base64` is not supported/,
    ],
    [
      "a field outside the map",
      "selection:\n  ProcessName: x\ncondition: selection",
      /:11: rule r1: field `ProcessName` is not in the field map/,
    ],
    [
      "near",
      "a:\n  database.name: x\ncondition: a | near b",
      /:12: rule r1: aggregation `near b` is not supported/,
    ],
    [
      "an aggregation without timeframe",
      "a:\n  database.name: x\ncondition: a | count() by user.name > 3",
      /:12: rule r1: an aggregation needs a `timeframe`/,
    ],
    [
      "a list of conditions",
      "a:\n  database.name: x\ncondition:\n  - a\n  - a",
      /:13: rule r1: a list of Sigma conditions is not supported/,
    ],
    [
      "a selection the condition does not have",
      "a:\n  database.name: x\ncondition: a and b",
      /:12: rule r1: condition: `b` names no selection/,
    ],
    [
      "a bad CIDR",
      "a:\n  src_endpoint.ip|cidr: 10.0.0.0/33\ncondition: a",
      /:11: rule r1: `10.0.0.0\/33` is not a CIDR range/,
    ],
  ])(
    "refuses %s, naming the construct and its line",
    (_what, detection, expected) => {
      expect(problemOf(sigma(detection))).toMatch(expected);
    },
  );

  it("refuses another product", () => {
    expect(
      problemOf(
        sigma("a:\n  database.name: x\ncondition: a").replace(
          "product: sessionhouse",
          "product: windows",
        ),
      ),
    ).toMatch(/:8: rule r1: logsource\.product must be sessionhouse/);
  });

  it("writes every value through the quoting function", () => {
    const dir = mkdtempSync(join(testTmpDir(), "detect-rule-"));
    writeFileSync(
      join(dir, "r.yaml"),
      sigma('a:\n  database.name: "o\'brien\\\\"\ncondition: a'),
    );
    const [rule] = loadRules([dir]);
    expect(rule && ruleSql(rule, "db", "arrived")).toContain(
      String.raw`lowerUTF8(resource_name) = 'o\'brien\\'`,
    );
  });
});
