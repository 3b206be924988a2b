// The names the help copies so that it loads no heavy module (HELP_LISTS in command-tree.ts),
// held to the lists their owners define.
import { describe, expect, it } from "vitest";
import { HELP_LISTS } from "../../../src/cli/command-tree.js";
import { ALERT_RULES_FILE } from "../../../src/detections/grafana.js";
import { FILTER_KEYS } from "../../../src/reports/build.js";
import {
  DEFAULT_ARCHIVE_DIR,
  STANDARD_VIEWS,
} from "../../../src/warehouse/index.js";

describe("the help's copies of names defined elsewhere", () => {
  it("are the names their owners define", () => {
    expect(HELP_LISTS).toEqual({
      standards: Object.keys(STANDARD_VIEWS),
      reportFilters: [...FILTER_KEYS],
      archiveDir: DEFAULT_ARCHIVE_DIR,
      alertRulesFile: ALERT_RULES_FILE,
    });
  });
});
