// A migration file, once in the repository, is never edited: databases have applied it and
// recorded its checksum, and `migrate` refuses a file whose checksum changed. This holds every
// file to the checksum listed in test/fixtures/migration-checksums.json; a new file is added to
// the list (the test says so), an existing one never changes there.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { readMigrations } from "../../../src/warehouse/migrate.js";

const LIST = new URL(
  "../../fixtures/migration-checksums.json",
  import.meta.url,
);

const listed = JSON.parse(readFileSync(LIST, "utf8")) as Record<string, string>;

/** What is wrong with the files against the list, one line each (empty when nothing is). */
function checksumProblems(
  files: readonly { name: string; checksum: string }[],
  list: Readonly<Record<string, string>>,
): string[] {
  const problems: string[] = [];
  const names = new Set(files.map((f) => f.name));
  for (const f of files) {
    const want = list[f.name];
    if (want === undefined)
      problems.push(
        `${f.name} is new: add it to test/fixtures/migration-checksums.json as "${f.name}": "${f.checksum}"`,
      );
    else if (want !== f.checksum)
      problems.push(
        `${f.name} was edited after it was committed (checksum ${f.checksum}, listed ${want}): databases that applied it refuse to migrate; restore it (git checkout main -- migrations/${f.name}) and put the change in a new numbered migration`,
      );
  }
  for (const name of Object.keys(list))
    if (!names.has(name))
      problems.push(
        `${name} is listed but gone from migrations/: databases that applied it keep its tables; restore the file`,
      );
  return problems;
}

describe("migration checksums", () => {
  it("every migration file has the checksum it was committed with", () => {
    expect(checksumProblems(readMigrations(), listed)).toEqual([]);
  });

  it("names an edited file, a new file and a removed file, each with what to do", () => {
    const problems = checksumProblems(
      [
        { name: "0001_bootstrap.sql", checksum: "edited" },
        { name: "0099_new.sql", checksum: "abc" },
      ],
      { "0001_bootstrap.sql": "original", "0002_sessions.sql": "x" },
    );
    expect(problems).toEqual([
      expect.stringMatching(
        /^0001_bootstrap\.sql was edited .*new numbered migration$/,
      ),
      expect.stringMatching(
        /^0099_new\.sql is new: add it to test\/fixtures\/migration-checksums\.json/,
      ),
      expect.stringMatching(/^0002_sessions\.sql is listed but gone/),
    ]);
  });
});
