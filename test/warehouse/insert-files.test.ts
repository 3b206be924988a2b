import { existsSync, mkdtempSync, statfsSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  blockFileDir,
  blockFilePath,
  INSERT_FILE_PREFIX,
  removeStaleInsertFiles,
} from "../../src/warehouse/block-files.js";

describe("temporary insert files", () => {
  it("removes the files of a killed process and keeps those of a live one", async () => {
    const dir = mkdtempSync(join(tmpdir(), "insert-files-"));
    // Beyond the kernel's pid limit (2^22): never a live process.
    const dead = join(dir, `${INSERT_FILE_PREFIX}${2 ** 23}-abc123.jsonl`);
    const live = join(dir, `${INSERT_FILE_PREFIX}${process.pid}-def456.jsonl`);
    const other = join(dir, "unrelated.jsonl");
    for (const f of [dead, live, other]) writeFileSync(f, "{}\n");
    expect(await removeStaleInsertFiles([dir])).toBe(1);
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(other)).toBe(true);
  });

  it("looks in /dev/shm as well, where blocks go when it has room", async () => {
    if (!existsSync("/dev/shm")) return;
    const dead = join(
      "/dev/shm",
      `${INSERT_FILE_PREFIX}${2 ** 23}-0a1b2c.jsonl`,
    );
    writeFileSync(dead, "{}\n");
    expect(await removeStaleInsertFiles()).toBeGreaterThanOrEqual(1);
    expect(existsSync(dead)).toBe(false);
  });

  it("puts block files in /dev/shm unless TMPDIR names a directory or /dev/shm is small", () => {
    const path = blockFilePath();
    expect(dirname(path)).toBe(blockFileDir());
    expect(basename(path)).toMatch(
      new RegExp(`^${INSERT_FILE_PREFIX}${process.pid}-[0-9a-f]{12}\\.jsonl$`),
    );
    let roomy: boolean;
    try {
      const fs = statfsSync("/dev/shm");
      roomy = fs.bavail * fs.bsize >= 2 ** 30;
    } catch {
      roomy = false;
    }
    expect(blockFileDir()).toBe(
      roomy && !process.env.TMPDIR ? "/dev/shm" : tmpdir(),
    );
  });
});
