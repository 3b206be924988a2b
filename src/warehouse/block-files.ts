// Temporary files that carry an insert's lines to the engine: the embedded writer's blocks and
// the HTTP front's request bodies. They live for one insert. They go to memory-backed storage
// (/dev/shm) when it has room: on a disk file system each file costs an inode and its blocks
// to allocate and free again, work that competes with the engine for the same cores.
// They hold raw sessions, and /dev/shm and /tmp are shared by every local user: the files go to
// a directory of this user's only, `sessionhouse-<uid>` (0700, checked to be ours and no
// symbolic link on every use), and are themselves 0600.
import { randomBytes } from "node:crypto";
import { lstatSync, rmSync, statfsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ownPrivateDir, writePrivateFile } from "../util/private-files.js";
import { processAlive } from "../util/process.js";

/** Prefix of the block files; the writer's pid follows, so stale ones can be told. */
export const INSERT_FILE_PREFIX = "sessionhouse-insert-";

/** Memory-backed storage on Linux. */
const SHARED_MEMORY_DIR = "/dev/shm";

/**
 * Free space /dev/shm needs to be used: a few blocks in flight with room to spare. A container's
 * default /dev/shm (64 MB) is smaller, and the temporary directory serves instead.
 */
const SHARED_MEMORY_MIN_FREE_BYTES = 1024 * 2 ** 20;

let chosen: string | undefined;

/**
 * Where temporary files are made: the temporary directory when TMPDIR names one (the operator
 * chose it), else /dev/shm when it exists with room, else the temporary directory.
 */
function baseDir(): string {
  chosen ??= process.env.TMPDIR
    ? tmpdir()
    : sharedMemoryHasRoom()
      ? SHARED_MEMORY_DIR
      : tmpdir();
  return chosen;
}

/** This user's directory for block files in `base`. */
export function privateDirIn(base: string): string {
  return join(base, `sessionhouse-${process.getuid?.() ?? "user"}`);
}

/**
 * Where block files go: this user's private directory in /dev/shm or the temporary directory
 * (see baseDir), made when missing and checked on every call (TEMP_DIR_UNSAFE when another
 * user could reach into it).
 */
export function blockFileDir(): string {
  return ownPrivateDir(privateDirIn(baseDir()));
}

/**
 * After /dev/shm ran out of room for a block (other processes fill it too): the temporary
 * directory from now on. Returns the new directory, or undefined when it was already that one.
 */
function leaveSharedMemory(): string | undefined {
  if (baseDir() !== SHARED_MEMORY_DIR) return undefined;
  chosen = tmpdir();
  return blockFileDir();
}

function sharedMemoryHasRoom(): boolean {
  try {
    const fs = statfsSync(SHARED_MEMORY_DIR);
    return fs.bavail * fs.bsize >= SHARED_MEMORY_MIN_FREE_BYTES;
  } catch {
    return false;
  }
}

/** A new block file's path in `dir`. */
export function blockFilePath(dir = blockFileDir()): string {
  return join(
    dir,
    `${INSERT_FILE_PREFIX}${process.pid}-${randomBytes(6).toString("hex")}.jsonl`,
  );
}

/**
 * Writes a block file (a new file, 0600) and returns its path. Written synchronously (a few
 * milliseconds for a block, into memory): an async write finishes in a callback that waits for
 * the event loop, and while the sync parses pages already buffered the loop does not turn, so
 * the insert would start only after it. When /dev/shm has no room left for it, the block goes
 * to the temporary directory, as every later one does.
 */
export function writeBlockFile(body: Buffer): string {
  const file = blockFilePath();
  try {
    writePrivateFile(file, body, { flag: "wx" });
    return file;
  } catch (err) {
    rmSync(file, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    const fallback =
      code === "ENOSPC" || code === "EDQUOT" ? leaveSharedMemory() : undefined;
    if (fallback === undefined) throw err;
    const elsewhere = blockFilePath(fallback);
    writePrivateFile(elsewhere, body, { flag: "wx" });
    return elsewhere;
  }
}

/**
 * The directories block files may be in: this user's private directories that exist and are
 * really ours, and the shared directories themselves, where versions before the private
 * directory put them.
 */
function candidateDirs(): string[] {
  const bases = [...new Set([SHARED_MEMORY_DIR, tmpdir()])];
  const uid = process.getuid?.();
  const own = bases.map(privateDirIn).filter((dir) => {
    try {
      const st = lstatSync(dir);
      return st.isDirectory() && (uid === undefined || st.uid === uid);
    } catch {
      return false;
    }
  });
  return [...own, ...bases];
}

/**
 * Removes block files left by a process that was killed mid-insert (SIGKILL runs no cleanup),
 * from `dirs` (by default every directory block files may be in). A file is left alone while
 * the process that wrote it still runs, and so is one of another user.
 */
export async function removeStaleInsertFiles(
  dirs: readonly string[] = candidateDirs(),
): Promise<number> {
  const pattern = new RegExp(`^${INSERT_FILE_PREFIX}(\\d+)-[0-9a-f]+\\.jsonl$`);
  const uid = process.getuid?.();
  let removed = 0;
  for (const dir of dirs) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const m = pattern.exec(name);
      if (!m || processAlive(Number(m[1]))) continue;
      const path = join(dir, name);
      try {
        if (uid !== undefined && lstatSync(path).uid !== uid) continue;
      } catch {
        continue;
      }
      await rm(path, { force: true });
      removed++;
    }
  }
  return removed;
}
