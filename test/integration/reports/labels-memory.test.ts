// The data labels of a person's sessions in the access review, for a person with many sessions
// on a resource whose columns hold many labels: the report gathers each person's distinct
// labels, never every session's list of them, so its memory does not grow with the person's
// sessions. Built under a query memory cap that a list of every session's labels exceeds.
import { beforeAll, expect, it } from "vitest";
import { cappedReportCsv } from "../../helpers/capped-report.js";

const SESSIONS = 500_000;
const LABELS = 40;
/**
 * Above what the report needs (measured up to 97 MiB: a join's blocks vary with how its threads
 * interleave), below every session's 40 labels held at once (over 300 MB).
 */
const MEMORY_CAP = 128 * 2 ** 20;
const FROM = "2026-10-01";
const TO = "2026-10-02";

let csv: string;

beforeAll(async () => {
  csv = await cappedReportCsv({
    kind: "access-review",
    fill: [
      `INSERT INTO {db}.inventory_columns (id, kind, resource_id, resource_name, path, name, data_label, data_labels, observed_at, version)
        SELECT concat('col-', toString(number)), 'column', 'res-1', 'db-1', 'public.t', concat('c', toString(number)),
               label, [label], toDateTime64('${FROM} 00:00:00', 3, 'UTC'), 1
        FROM (SELECT number, concat('label-', leftPad(toString(number), 2, '0')) AS label FROM numbers(${LABELS}))`,
      `INSERT INTO {db}.sessions (id, start_time, user_type, user_username, user_name, native_username, resource_id, resource_name, resource_technology, fetched_at, version)
        SELECT concat('s-', toString(number)), toDateTime64('${FROM} 00:00:00', 3, 'UTC') + toIntervalMillisecond(number * 150),
               'human', 'alice.example', 'alice.example', 'analyst', 'res-1', 'db-1', 'postgres',
               toDateTime64('${TO} 00:00:00', 3, 'UTC'), 1
        FROM numbers(${SESSIONS})`,
    ],
    memoryCap: MEMORY_CAP,
    from: FROM,
    to: TO,
    csv: "access-per-person.csv",
  });
}, 120_000);

it("lists the person's distinct labels once, under the memory cap", () => {
  const [header, row] = csv.split("\r\n");
  const columns = (header ?? "").split(",");
  const cells = (row ?? "").match(/("[^"]*"|[^,]*)(,|$)/g) ?? [];
  const cell = (key: string) =>
    (cells[columns.indexOf(key)] ?? "").replace(/,$/, "").replace(/^"|"$/g, "");
  expect(cell("person")).toBe("alice.example");
  expect(Number(cell("sessions"))).toBe(SESSIONS);
  expect(cell("data_labels")).toBe(
    Array.from(
      { length: LABELS },
      (_, i) => `label-${String(i).padStart(2, "0")}`,
    ).join(", "),
  );
});
