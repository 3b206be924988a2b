// `sessionhouse export ocsf|ecs --from T --to T [--out FILE]`: the sessions that started in a
// range as JSON Lines of a standard schema (docs/standards.md), to stdout for a forwarder's
// pipe, or to a new file only its owner can read.
import { rmSync } from "node:fs";
import { UsageError } from "../../util/errors.js";
import { noSuchName } from "../../util/nearest.js";
import { openPrivateFile } from "../../util/private-files.js";
import { parseInstant } from "../../util/time.js";
import {
  exportStandard,
  STANDARD_VIEWS,
  type StandardName,
} from "../../warehouse/index.js";
import { withWarehouse } from "../command-warehouse.js";
import { configFrom, type GlobalOptions } from "../runtime.js";

interface ExportFlags {
  from: string;
  to: string;
  out?: string;
}

const STANDARD_NAMES = Object.keys(STANDARD_VIEWS) as StandardName[];

export async function runExport(
  globals: GlobalOptions,
  standard: string,
  o: ExportFlags,
): Promise<void> {
  const name = standardName(standard);
  const nowMs = Date.now();
  const fromMs = parseInstant(o.from, "--from", nowMs);
  const toMs = parseInstant(o.to, "--to", nowMs);
  if (fromMs >= toMs)
    throw new UsageError(
      `--from (${new Date(fromMs).toISOString()}) is not before --to (${new Date(toMs).toISOString()})`,
      { hint: "give a range whose start comes before its end" },
    );
  const config = configFrom(globals, {}, { needsApi: false });
  await withWarehouse(config, "read", async (w) => {
    if (o.out === undefined) {
      await exportStandard(w, name, { fromMs, toMs }, process.stdout);
      return;
    }
    const path = o.out;
    const handle = await openPrivateFile(path, config.files).catch(
      (err: NodeJS.ErrnoException) => {
        if (err.code !== "EEXIST") throw err;
        throw new UsageError(`${path} exists already`, {
          hint: "name a new file, or remove the old one first",
        });
      },
    );
    const file = handle.createWriteStream();
    try {
      const n = await exportStandard(w, name, { fromMs, toMs }, file);
      await new Promise<void>((resolve, reject) =>
        file.end((err?: Error | null) => (err ? reject(err) : resolve())),
      );
      process.stderr.write(
        `exported ${n} sessions (${STANDARD_VIEWS[name].name}) to ${path}\n`,
      );
    } catch (err) {
      // A file cut short is no export: it goes.
      file.destroy();
      rmSync(path, { force: true });
      throw err;
    }
  });
}

function standardName(standard: string): StandardName {
  const name = standard.toLowerCase();
  if ((STANDARD_NAMES as string[]).includes(name)) return name as StandardName;
  throw noSuchName(["standard", "standards"], standard, STANDARD_NAMES);
}
