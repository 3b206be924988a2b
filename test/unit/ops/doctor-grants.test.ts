// Reading SHOW GRANTS for doctor: what the exporter's user lacks on its database, and how
// Grafana's reader differs from what grafana-reader.sh makes it. The answers are as a server
// prints them (the first is the embedded engine's own answer for its default user).
import { describe, expect, it } from "vitest";
import {
  missingExporterGrants,
  readerGrantProblems,
  readerProfileProblems,
} from "../../../src/ops/doctor/grants.js";
import { READER_SETTINGS } from "../../../src/warehouse/reader-settings.js";

const EMBEDDED_DEFAULT = [
  "GRANT SOURCES ON *.* TO default",
  "GRANT TABLE ENGINE ON * TO default",
  "GRANT CHECK, SHOW, SELECT, INSERT, ALTER, CREATE, DROP, UNDROP TABLE, TRUNCATE, OPTIMIZE, BACKUP, KILL QUERY, SYSTEM, dictGet, INTROSPECTION, CLUSTER ON *.* TO default",
];

describe("doctor: the exporter's grants", () => {
  it("everything on *.* (or ALL) lacks nothing", () => {
    expect(
      missingExporterGrants(EMBEDDED_DEFAULT, "sessionhouse", true),
    ).toEqual([]);
    expect(
      missingExporterGrants(
        ["GRANT ALL ON *.* TO admin WITH GRANT OPTION"],
        "sh",
        false,
      ),
    ).toEqual([]);
  });

  it("grants on the database itself count; CREATE DATABASE is needed only while it does not exist", () => {
    const lines = [
      "GRANT SELECT, INSERT, ALTER, CREATE TABLE, CREATE VIEW, DROP TABLE, DROP VIEW ON sessionhouse.* TO exporter",
    ];
    expect(missingExporterGrants(lines, "sessionhouse", true)).toEqual([]);
    expect(missingExporterGrants(lines, "sessionhouse", false)).toEqual([
      "CREATE DATABASE",
    ]);
    expect(missingExporterGrants(lines, "other", true)).toHaveLength(7);
  });

  it.each([
    {
      what: "a missing INSERT and a revoked ALTER are named",
      lines: [
        "GRANT SELECT, ALTER, CREATE, DROP ON `sessionhouse`.* TO exporter",
        "REVOKE ALTER ON sessionhouse.* FROM exporter",
      ],
      missing: ["INSERT", "ALTER"],
    },
    {
      what: "a grant on one table or on some columns is not a grant on the database",
      lines: [
        "GRANT SELECT(id, raw), INSERT ON sessionhouse.sessions TO exporter",
        "GRANT ALTER, CREATE, DROP ON sessionhouse.* TO exporter",
      ],
      missing: ["SELECT", "INSERT"],
    },
  ])("$what", ({ lines, missing }) => {
    expect(missingExporterGrants(lines, "sessionhouse", true)).toEqual(missing);
  });
});

describe("doctor: Grafana reader's grants", () => {
  const script = [
    "GRANT SELECT ON sessionhouse.* TO grafana_reader",
    "REVOKE SELECT(raw) ON sessionhouse.sessions FROM grafana_reader",
    "REVOKE SELECT(raw) ON sessionhouse.dead_letters FROM grafana_reader",
  ];

  it("as grafana-reader.sh makes it: no problem", () => {
    expect(readerGrantProblems(script, "sessionhouse")).toEqual([]);
  });

  it("a reader that may write, may read elsewhere, or reads the raw records", () => {
    expect(
      readerGrantProblems(
        ["GRANT SELECT, INSERT ON sessionhouse.* TO grafana_reader"],
        "sessionhouse",
      ),
    ).toEqual([
      "also granted INSERT ON sessionhouse.*",
      "SELECT(raw) ON sessionhouse.sessions is not revoked",
    ]);
    expect(
      readerGrantProblems(
        [...script, "GRANT SELECT ON *.* TO grafana_reader"],
        "sessionhouse",
      ),
    ).toEqual(["also granted SELECT ON *.*"]);
    expect(readerGrantProblems([], "sessionhouse")).toEqual([
      "no SELECT on sessionhouse.*",
      "SELECT(raw) ON sessionhouse.sessions is not revoked",
    ]);
  });
});

describe("doctor: Grafana reader's profile", () => {
  const changeable = [...READER_SETTINGS.keys()]
    .map((n) => `${n} CHANGEABLE_IN_READONLY`)
    .join(", ");
  const profile = (extra: string) =>
    `CREATE SETTINGS PROFILE grafana_reader_profile SETTINGS readonly = 1 CONST, ${extra}max_memory_usage = 4000000000 CONST, result_overflow_mode = 'throw' CONST`;

  it("lets the reader change exactly the readers' settings: no problem", () => {
    expect(readerProfileProblems(profile(`${changeable}, `))).toEqual([]);
  });

  it("names a setting the profile lets it change beyond the list, and one of the list it does not", () => {
    expect(
      readerProfileProblems(
        profile(
          `max_execution_time = 60 MIN 1 MAX 300 CHANGEABLE_IN_READONLY, \`output_format_schema\` WRITABLE, `,
        ),
      ),
    ).toEqual([
      "its profile lets it change output_format_schema, which a reader may not set",
      `its profile does not let it change ${[...READER_SETTINGS.keys()].filter((n) => n !== "max_execution_time").join(", ")} (CHANGEABLE_IN_READONLY), which readers set`,
    ]);
  });
});
