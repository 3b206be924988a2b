// Directories and files this process creates are its owner's only: directories 0700, files
// 0600, or with `groupReadable` (files.groupReadable, SESSIONHOUSE_GROUP_READABLE) 0750 and 0640
// to share them with the owner's group on purpose. The mode is set exactly, whatever the
// process's umask (which only narrows a mode given at creation), and a file gets its mode
// before its first byte is written.
import {
  chmodSync,
  closeSync,
  fchmodSync,
  lstatSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { open, type FileHandle } from "node:fs/promises";
import { dirname, resolve } from "node:path";
import { FatalError } from "./errors.js";

export interface Sharing {
  /** Share with the owner's group: directories 0750, files 0640 (default: 0700, 0600). */
  groupReadable?: boolean | undefined;
}

export interface Modes {
  dir: number;
  file: number;
}

export function modesFor(sharing: Sharing = {}): Modes {
  return sharing.groupReadable
    ? { dir: 0o750, file: 0o640 }
    : { dir: 0o700, file: 0o600 };
}

/** `0o755` as `"0755"`, for messages. */
export function octal(mode: number): string {
  return `0${(mode & 0o777).toString(8).padStart(3, "0")}`;
}

/**
 * Creates `dir` and its missing parents, each with the private mode; a directory that exists
 * already is left as it is (see `closeToOthers` for one this process owns).
 */
export function makePrivateDir(dir: string, sharing: Sharing = {}): void {
  const { dir: mode } = modesFor(sharing);
  const first = mkdirSync(dir, { recursive: true, mode });
  if (first === undefined) return;
  // mkdir gives back the first directory it made; every one from there down to `dir` is new.
  const made: string[] = [];
  for (let d = resolve(dir); ; d = dirname(d)) {
    made.push(d);
    if (d === resolve(first) || dirname(d) === d) break;
  }
  for (const d of made) chmodSync(d, mode);
}

/**
 * Writes a file with the private mode, set on the open file before any byte is written.
 * `flag` as for fs.open: "w" (default) replaces a file, "wx" refuses one that exists.
 */
export function writePrivateFile(
  path: string,
  data: string | NodeJS.ArrayBufferView,
  options: Sharing & { flag?: "w" | "wx" } = {},
): void {
  const { file: mode } = modesFor(options);
  const fd = openSync(path, options.flag ?? "w", mode);
  try {
    fchmodSync(fd, mode);
    writeFileSync(fd, data);
  } finally {
    closeSync(fd);
  }
}

/**
 * Writes a file whole or not at all, with the private mode: a reader never sees it half
 * written (it is written beside and renamed over `path`).
 */
export function writePrivateFileWhole(
  path: string,
  data: string,
  sharing: Sharing = {},
): void {
  const temporary = `${path}.${process.pid}.tmp`;
  rmSync(temporary, { force: true });
  writePrivateFile(temporary, data, { ...sharing, flag: "wx" });
  renameSync(temporary, path);
}

/**
 * Opens a new file (flag "wx" unless told) with the private mode, for writing in pieces or as a
 * stream (`handle.createWriteStream()`); the caller closes it.
 */
export async function openPrivateFile(
  path: string,
  options: Sharing & { flag?: "w" | "wx" } = {},
): Promise<FileHandle> {
  const { file: mode } = modesFor(options);
  const handle = await open(path, options.flag ?? "wx", mode);
  try {
    await handle.chmod(mode);
  } catch (err) {
    await handle.close();
    throw err;
  }
  return handle;
}

/**
 * Narrows an existing directory this process's user owns to the private mode when it grants
 * more than that (a directory made by an older version, or under a wider umask). Returns the
 * old and new modes when it changed it; leaves a directory of another owner alone.
 */
export function closeToOthers(
  dir: string,
  sharing: Sharing = {},
): { was: number; now: number } | undefined {
  const { dir: mode } = modesFor(sharing);
  const st = statSync(dir);
  const uid = process.getuid?.();
  if (uid !== undefined && st.uid !== uid) return undefined;
  const was = st.mode & 0o777;
  if ((was & ~mode) === 0) return undefined;
  // Only narrowed, never widened: the set-group-id bit a shared directory may carry stays.
  chmodSync(dir, (st.mode & 0o7000) | (was & mode));
  return { was, now: was & mode };
}

/**
 * A directory only this process's user can enter, in a place other users can write too
 * (/dev/shm, /tmp): created 0700 when missing; when it exists it must be a real directory (not
 * a symbolic link) owned by this user, which another user could otherwise have made beforehand
 * to read or change what goes in. One of ours that grants more is narrowed to 0700.
 */
export function ownPrivateDir(dir: string): string {
  let st;
  try {
    st = lstatSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    try {
      mkdirSync(dir, { mode: 0o700 });
    } catch (e) {
      // Made at the same moment by another process: checked below like any other.
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
    }
    st = lstatSync(dir);
  }
  const uid = process.getuid?.();
  const problem = st.isSymbolicLink()
    ? "is a symbolic link"
    : !st.isDirectory()
      ? "is not a directory"
      : uid !== undefined && st.uid !== uid
        ? `belongs to another user (uid ${st.uid})`
        : undefined;
  if (problem)
    throw new FatalError(
      "TEMP_DIR_UNSAFE",
      `the private directory for temporary files ${dir} ${problem}: another local user may have made it to read or change the data that passes through it`,
      {
        hint: `remove ${dir} (it holds nothing sessionhouse needs), or set TMPDIR to a directory only this user can write`,
      },
    );
  if ((st.mode & 0o077) !== 0) chmodSync(dir, 0o700);
  return dir;
}
