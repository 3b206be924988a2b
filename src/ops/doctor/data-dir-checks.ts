// The embedded engine's data directory (no CLICKHOUSE_URL): its owner, its mode, the free space
// under it and whether another process holds it. Modes are read, never tried: root may write
// whatever the mode says, and the service's user may not be root.
import { statfsSync, statSync, type Stats } from "node:fs";
import { dirname, resolve } from "node:path";
import type { Config } from "../../config/index.js";
import { modesFor, octal } from "../../util/private-files.js";
import { processAlive } from "../../util/process.js";
import { engineLockPid, findService } from "../../warehouse/index.js";
import {
  fail,
  ok,
  Skip,
  spaceFinding,
  warn,
  type Finding,
  familySpecs,
} from "./check.js";

export interface DataDirCheckContext {
  config: Config;
}

/** The data directory, its stat (undefined when it does not exist yet); Skip on a server. */
function dataDir(ctx: DataDirCheckContext): {
  dir: string;
  stat: Stats | undefined;
} {
  if (ctx.config.clickhouse.url)
    throw new Skip("CLICKHOUSE_URL is set: no embedded data directory");
  const dir = resolve(ctx.config.clickhouse.dataDir);
  try {
    return { dir, stat: statSync(dir) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT")
      return { dir, stat: undefined };
    throw err;
  }
}

function notYet(dir: string): Finding {
  return ok(`${dir} does not exist yet: migrate or run creates it`);
}

function owner(ctx: DataDirCheckContext): Finding {
  const { dir, stat } = dataDir(ctx);
  if (!stat) return notYet(dir);
  if (!stat.isDirectory())
    return fail(
      `${dir} is not a directory`,
      "set SESSIONHOUSE_DATA_DIR to a directory",
    );
  const uid = process.getuid?.();
  if (uid === undefined || stat.uid === uid)
    return ok(`${dir} is owned by uid ${stat.uid}, this process's user`);
  return fail(
    `${dir} is owned by uid ${stat.uid}, this process runs as uid ${uid}`,
    `run sessionhouse as the directory's owner, or chown -R ${uid} ${dir}`,
  );
}

function mode(ctx: DataDirCheckContext): Finding {
  const { dir, stat } = dataDir(ctx);
  if (!stat) return notYet(dir);
  const have = stat.mode & 0o777;
  const want = modesFor(ctx.config.files).dir;
  if ((have & 0o700) !== 0o700)
    return fail(
      `${dir} has mode ${octal(have)}: its owner may not read, write and enter it`,
      `chmod ${octal(want)} ${dir}`,
    );
  if ((have & ~want & 0o777) !== 0)
    return warn(
      `${dir} has mode ${octal(have)}, open to other users (expected ${octal(want)})`,
      `chmod ${octal(want)} ${dir} (the next command that opens it does so too)`,
    );
  return ok(`${dir} has mode ${octal(have)}`);
}

function space(ctx: DataDirCheckContext): Finding {
  let { dir } = dataDir(ctx);
  // A directory not made yet lands on the disk of its nearest existing parent.
  for (;;) {
    try {
      const fs = statfsSync(dir);
      return spaceFinding(dir, fs.bavail * fs.bsize, fs.blocks * fs.bsize);
    } catch (err) {
      if (
        (err as NodeJS.ErrnoException).code !== "ENOENT" ||
        dirname(dir) === dir
      )
        throw err;
      dir = dirname(dir);
    }
  }
}

async function holder(ctx: DataDirCheckContext): Promise<Finding> {
  const { dir, stat } = dataDir(ctx);
  if (!stat) return notYet(dir);
  const service = await findService(dir);
  if (service.state !== "none")
    return fail(
      `${dir} is held by sessionhouse run (pid ${service.record.pid}), whose read access ${service.state === "running" ? "answers" : "does not answer"} at ${service.record.url}`,
      "stop that service (SIGTERM) before starting another; status, query and windows list read through it meanwhile",
    );
  const pid = engineLockPid(dir);
  if (pid !== undefined && pid !== process.pid && processAlive(pid))
    return fail(
      `${dir} is held by the embedded engine of process ${pid} (a sync, migrate or demo, or a run without read access)`,
      "wait for that process to end or stop it, or set SESSIONHOUSE_DATA_DIR to another directory",
    );
  if (pid !== undefined && pid !== process.pid)
    return ok(
      `${dir} is free (the lock of process ${pid}, which is gone, is taken over)`,
    );
  return ok(`${dir} is not held by another process`);
}

export const DATA_DIR_CHECKS = familySpecs<DataDirCheckContext>(
  "data-dir",
  true,
  [
    ["owner", owner],
    ["mode", mode],
    ["free space", space],
    ["held", holder],
  ],
);
