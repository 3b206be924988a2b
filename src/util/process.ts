// Whether another process is still running, from its pid.

/** Whether a process with this pid exists; one that belongs to another user (EPERM) counts. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
