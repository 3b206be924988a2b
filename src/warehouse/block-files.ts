// Temporary files that carry an insert's lines to the engine: the embedded writer's blocks and
// the HTTP front's request bodies. They live for one insert. They go to memory-backed storage
// (/dev/shm) when it has room: on a disk file system each file costs an inode and its blocks
// to allocate and free again, work that competes with the engine for the same cores.
import { randomBytes } from "node:crypto";
import { statfsSync } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
 * Where block files go: the temporary directory when TMPDIR names one (the operator chose it),
 * else /dev/shm when it exists with room, else the temporary directory.
 */
export function blockFileDir(): string {
  chosen ??= process.env.TMPDIR
    ? tmpdir()
    : sharedMemoryHasRoom()
      ? SHARED_MEMORY_DIR
      : tmpdir();
  return chosen;
}

/**
 * After /dev/shm ran out of room for a block (other processes fill it too): the temporary
 * directory from now on. Returns the new directory, or undefined when it was already that one.
 */
export function leaveSharedMemory(): string | undefined {
  if (blockFileDir() !== SHARED_MEMORY_DIR) return undefined;
  chosen = tmpdir();
  return chosen;
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
 * Removes block files left by a process that was killed mid-insert (SIGKILL runs no cleanup),
 * from `dirs` (by default every directory block files may be in). A file is left alone while
 * the process that wrote it still runs.
 */
export async function removeStaleInsertFiles(
  dirs: readonly string[] = [...new Set([SHARED_MEMORY_DIR, tmpdir()])],
): Promise<number> {
  const pattern = new RegExp(`^${INSERT_FILE_PREFIX}(\\d+)-[0-9a-f]+\\.jsonl$`);
  let removed = 0;
  for (const dir of dirs) {
    for (const name of await readdir(dir).catch(() => [] as string[])) {
      const m = pattern.exec(name);
      if (!m || processAlive(Number(m[1]))) continue;
      await rm(join(dir, name), { force: true });
      removed++;
    }
  }
  return removed;
}
