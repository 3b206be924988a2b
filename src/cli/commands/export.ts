// `sessionhouse export ocsf|ecs --from T --to T [--out FILE]`: the sessions that started in a
// range as JSON Lines of a standard schema (docs/standards.md), to stdout for a forwarder's
// pipe, or to a new file only its owner can read.
import { rmSync } from "node:fs";
import type { Command } from "commander";
import { UsageError } from "../../util/errors.js";
import { openPrivateFile } from "../../util/private-files.js";
import { parseInstant } from "../../util/time.js";
import {
  exportStandard,
  STANDARD_VIEWS,
  type StandardName,
} from "../../warehouse/index.js";
import { withWarehouse } from "../command-warehouse.js";
import {
  configFrom,
  READS_THROUGH_SERVICE,
  type GlobalOptions,
} from "../runtime.js";

interface ExportFlags {
  from: string;
  to: string;
  out?: string;
}

const NAMES = Object.keys(STANDARD_VIEWS) as StandardName[];

export function registerExportCommand(
  program: Command,
  globals: () => GlobalOptions,
): void {
  program
    .command("export")
    .description(
      "the sessions that started in a range as JSON Lines of a standard schema: ocsf (OCSF 1.8 Datastore Activity) or ecs (Elastic Common Schema 8)",
    )
    .argument("<standard>", NAMES.join(" or "))
    .requiredOption(
      "--from <time>",
      "start of the range (ISO 8601, Unix seconds, -7d, now)",
    )
    .requiredOption("--to <time>", "end of the range, excluded")
    .option(
      "--out <file>",
      "write to this new file (mode 0600) instead of stdout",
    )
    .addHelpText("after", READS_THROUGH_SERVICE)
    .action((standard: string, o: ExportFlags) =>
      runExport(globals(), standard, o),
    );
}

async function runExport(
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
  if ((NAMES as string[]).includes(name)) return name as StandardName;
  throw new UsageError(`"${standard}" is not a standard export knows`, {
    hint: `use ${NAMES.join(" or ")}`,
  });
}
