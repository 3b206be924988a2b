import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statfsSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  blockFileDir,
  blockFilePath,
  INSERT_FILE_PREFIX,
  privateDirIn,
  removeStaleInsertFiles,
  writeBlockFile,
} from "../../../src/warehouse/block-files.js";
import { ownPrivateDir } from "../../../src/util/private-files.js";
import { testTmpDir } from "../../helpers/run-tmp.js";

describe("temporary insert files", () => {
  it("removes the files of a killed process and keeps those of a live one", async () => {
    const dir = mkdtempSync(join(testTmpDir(), "insert-files-"));
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

  it("puts block files in this user's private directory in /dev/shm, unless TMPDIR names a directory or /dev/shm is small", () => {
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
    const base = roomy && !process.env.TMPDIR ? "/dev/shm" : tmpdir();
    expect(blockFileDir()).toBe(
      join(base, `sessionhouse-${process.getuid?.()}`),
    );
    // Not the shared directory itself: one only this user can enter.
    const st = lstatSync(blockFileDir());
    expect(st.isDirectory()).toBe(true);
    expect(st.uid).toBe(process.getuid?.());
    expect(st.mode & 0o777).toBe(0o700);
  });

  it("writes a block file readable by its owner only, whatever the umask", () => {
    const umask = process.umask(0);
    let file: string | undefined;
    try {
      file = writeBlockFile(Buffer.from('{"a":1}\n'));
      expect(dirname(file)).toBe(blockFileDir());
      expect(lstatSync(file).mode & 0o777).toBe(0o600);
      expect(readFileSync(file, "utf8")).toBe('{"a":1}\n');
    } finally {
      process.umask(umask);
      if (file) rmSync(file, { force: true });
    }
  });

  it("removes a killed process's files from the private directory too", async () => {
    const dead = join(
      blockFileDir(),
      `${INSERT_FILE_PREFIX}${2 ** 23}-0d0e0f.jsonl`,
    );
    writeFileSync(dead, "{}\n");
    expect(await removeStaleInsertFiles()).toBeGreaterThanOrEqual(1);
    expect(existsSync(dead)).toBe(false);
  });

  it("refuses a private directory that is a symbolic link, and closes one of ours that is open", () => {
    const base = mkdtempSync(join(testTmpDir(), "insert-files-"));
    try {
      const elsewhere = join(base, "elsewhere");
      mkdirSync(elsewhere);
      symlinkSync(elsewhere, privateDirIn(base));
      expect(() => ownPrivateDir(privateDirIn(base))).toThrow(
        expect.objectContaining({
          code: "TEMP_DIR_UNSAFE",
          message: expect.stringMatching(/is a symbolic link/) as string,
        }),
      );
      rmSync(privateDirIn(base));
      mkdirSync(privateDirIn(base), { mode: 0o777 });
      const umask = process.umask(0);
      try {
        mkdirSync(join(base, "open"), { mode: 0o777 });
      } finally {
        process.umask(umask);
      }
      expect(ownPrivateDir(join(base, "open"))).toBe(join(base, "open"));
      expect(lstatSync(join(base, "open")).mode & 0o777).toBe(0o700);
    } finally {
      rmSync(base, { recursive: true, force: true });
    }
  });
});
