import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  INSERT_FILE_PREFIX,
  removeStaleInsertFiles,
} from "../../src/warehouse/insert.js";

describe("temporary insert files", () => {
  it("removes the files of a killed process and keeps those of a live one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "insert-files-"));
    // Beyond the kernel's pid limit (2^22): never a live process.
    const dead = join(dir, `${INSERT_FILE_PREFIX}${2 ** 23}-abc123.jsonl`);
    const live = join(dir, `${INSERT_FILE_PREFIX}${process.pid}-def456.jsonl`);
    const other = join(dir, "unrelated.jsonl");
    for (const f of [dead, live, other]) writeFileSync(f, "{}\n");
    expect(await removeStaleInsertFiles(dir)).toBe(1);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
  });
});
