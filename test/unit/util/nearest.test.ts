// The refusal of a name that does not exist (noSuchName): exit-2 usage error, "no <kind> named
// <name>", the names nearest first, at most eight of them with the rest counted, and what else to
// say after them.
import { describe, expect, it } from "vitest";
import { UsageError } from "../../../src/util/errors.js";
import { byNearness, noSuchName } from "../../../src/util/nearest.js";

describe("noSuchName", () => {
  it("names the kind and the name, and offers the names nearest first", () => {
    const e = noSuchName(
      ["rule", "rules"],
      "privileged-native-offhours",
      ["new-client-address", "privileged-native-off-hours"],
      "nothing was run",
    );
    expect(e).toBeInstanceOf(UsageError);
    expect(e.message).toBe('no rule named "privileged-native-offhours"');
    expect(e.hint).toBe(
      "the rules, nearest first: privileged-native-off-hours, new-client-address; nothing was run",
    );
  });

  it("offers eight at most, counts the rest, and offers each name once", () => {
    const names = Array.from({ length: 12 }, (_, i) => `job${i}`);
    const e = noSuchName(["job", "jobs"], "job11x", [...names, "job11"]);
    expect(e.hint).toBe(
      `the jobs, nearest first: ${byNearness("job11x", names).slice(0, 8).join(", ")} (and 4 more)`,
    );
    expect(e.hint?.startsWith("the jobs, nearest first: job11, ")).toBe(true);
  });

  it("says when there is nothing to offer", () => {
    expect(noSuchName(["person", "people"], "x", []).hint).toBe(
      "there are no people",
    );
  });
});
