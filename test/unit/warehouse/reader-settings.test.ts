// The readers' settings are one list (src/warehouse/reader-settings.ts): the settings profile
// shipped for Grafana's reader on a ClickHouse server marks exactly its settings
// CHANGEABLE_IN_READONLY, and nothing else may change under its readonly = 1.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { READER_SETTINGS } from "../../../src/warehouse/reader-settings.js";

const SCRIPT = new URL(
  "../../../dashboards/provisioning/clickhouse/grafana-reader.sh",
  import.meta.url,
);

/** The settings of the script's CREATE SETTINGS PROFILE that a readonly = 1 user may change. */
function changeableInScript(): string[] {
  const text = readFileSync(SCRIPT, "utf8");
  const profile = /^CREATE SETTINGS PROFILE .* SETTINGS (.*);$/m.exec(
    text,
  )?.[1];
  expect(profile, "the script's CREATE SETTINGS PROFILE").toBeDefined();
  return (profile ?? "")
    .split(/,\s*/)
    .filter((e) => /\b(CHANGEABLE_IN_READONLY|WRITABLE)$/.test(e.trim()))
    .map((e) => e.trim().split(/[\s=]/)[0] ?? "");
}

describe("the readers' settings", () => {
  it("are exactly the settings grafana-reader.sh lets Grafana's reader change", () => {
    expect(changeableInScript().sort()).toEqual(
      [...READER_SETTINGS.keys()].sort(),
    );
  });

  it("each say why a reader needs them", () => {
    for (const [name, reason] of READER_SETTINGS) {
      expect(name).toMatch(/^[a-z0-9_]+$/);
      expect(reason.length, name).toBeGreaterThan(20);
    }
  });
});
