// The CLI's main() run in the test's own process, with only the given environment: its exit
// status and what it wrote to stdout and stderr. For tests that need no child process (the
// built CLI as a child is test/helpers/cli.ts).
import { vi } from "vitest";
import { main } from "../../src/cli/main.js";

export interface InProcessResult {
  status: number;
  stdout: string;
  stderr: string;
}

export async function mainInProcess(
  env: Record<string, string>,
  ...args: string[]
): Promise<InProcessResult> {
  const saved = { ...process.env };
  const out: string[] = [];
  const err: string[] = [];
  const keep = (into: string[]) => (chunk: string | Uint8Array) => {
    into.push(Buffer.from(chunk).toString("utf8"));
    return true;
  };
  const stdout = vi
    .spyOn(process.stdout, "write")
    .mockImplementation(keep(out));
  const stderr = vi
    .spyOn(process.stderr, "write")
    .mockImplementation(keep(err));
  // main adds an "error" listener to stdout and stderr (broken-pipe.ts) each time, as a
  // process runs it once: the ones a run added go with it, or node warns of a leak on stderr
  // after ten runs in one file.
  const listening = [process.stdout, process.stderr].map(
    (s) => [s, s.listeners("error")] as const,
  );
  try {
    for (const k of Object.keys(process.env))
      if (k.startsWith("SESSIONHOUSE_") || k.startsWith("CLICKHOUSE_"))
        delete process.env[k];
    Object.assign(process.env, env);
    const status = await main(["node", "sessionhouse", ...args]);
    return { status, stdout: out.join(""), stderr: err.join("") };
  } finally {
    for (const [s, before] of listening)
      for (const l of s.listeners("error"))
        if (!before.includes(l))
          s.removeListener("error", l as (...args: unknown[]) => void);
    stdout.mockRestore();
    stderr.mockRestore();
    process.env = saved;
  }
}
