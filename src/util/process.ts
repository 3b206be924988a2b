// Whether another process is still running, from its pid, and whether a pid still names the
// process that recorded it (a pid is reused once its process is gone).
import { readFileSync } from "node:fs";
import { hostname } from "node:os";

/** Whether a process with this pid exists; one that belongs to another user (EPERM) counts. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * What tells one process from a later one given the same pid: on Linux the boot and the
 * process's start time in clock ticks since that boot (/proc/<pid>/stat, field 22); "" where
 * /proc is not there (the pid alone then says who it is).
 */
export function processStartToken(pid: number): string {
  const stat = procStat(pid);
  return stat ? `${bootId()}:${stat.startTicks}` : "";
}

/** State (field 3) and start time (field 22) of /proc/<pid>/stat; undefined without it. */
function procStat(
  pid: number,
): { state: string; startTicks: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may hold spaces and ")": the fields
  // after the last ")" start with field 3.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const startTicks = fields[22 - 3];
  if (!state || startTicks === undefined || !/^\d+$/.test(startTicks))
    return undefined;
  return { state, startTicks };
}

let boot: string | undefined;
function bootId(): string {
  if (boot === undefined) {
    try {
      boot = readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim();
    } catch {
      boot = "";
    }
  }
  return boot;
}

/** The process that owns a run: its host, pid and start token (processStartToken). */
export interface ProcessOwner {
  host: string;
  pid: number;
  start: string;
}

let self: ProcessOwner | undefined;

/** This process as an owner. */
export function thisProcess(): ProcessOwner {
  self ??= {
    host: hostname(),
    pid: process.pid,
    start: processStartToken(process.pid),
  };
  return self;
}

/**
 * Whether the owner is gone: its pid is not running, or names a process that started at
 * another time. Undefined when it cannot be judged from here: the owner ran on another host,
 * or it was recorded without a pid.
 */
export function ownerGone(owner: ProcessOwner): boolean | undefined {
  const here = thisProcess();
  if (owner.host !== here.host || owner.pid <= 0) return undefined;
  if (owner.pid === here.pid) return owner.start !== here.start;
  if (!processAlive(owner.pid)) return true;
  // A zombie (killed, not yet reaped by its parent) still answers kill(pid, 0).
  const stat = procStat(owner.pid);
  if (stat && (stat.state === "Z" || stat.state === "X")) return true;
  if (owner.start === "" || !stat) return false;
  return `${bootId()}:${stat.startTicks}` !== owner.start;
}
