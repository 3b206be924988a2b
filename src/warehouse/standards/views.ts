// The standard-schema views by the name `export` takes, and the text of the migration that
// creates them (migrations/0025_standard_views.sql is this text, written once; a test holds the
// file to it, and a view of a new schema version goes in a new migration).
import { ECS_SESSIONS } from "./ecs.js";
import { viewStatement, type StandardView } from "./fields.js";
import { OCSF_DATASTORE_ACTIVITY } from "./ocsf.js";

export const STANDARD_VIEWS = {
  ocsf: OCSF_DATASTORE_ACTIVITY,
  ecs: ECS_SESSIONS,
} as const satisfies Record<string, StandardView>;

export type StandardName = keyof typeof STANDARD_VIEWS;

const HEADER = `-- The sessions in standard schemas, read-only views over sessions_enriched (0010), one row per
-- session: ${OCSF_DATASTORE_ACTIVITY.name} (${OCSF_DATASTORE_ACTIVITY.standard} Datastore Activity) and
-- ${ECS_SESSIONS.name} (${ECS_SESSIONS.standard}). Each column is named by its path in the standard
-- (quote it: \`actor.user.name\`). Generated from src/warehouse/standards/ (see docs/standards.md);
-- a new schema version gets a new view in a new migration, and these stay.
`;

/** The text of the migration that creates the standard views. */
export function standardViewsMigration(): string {
  return `${HEADER}\n${Object.values(STANDARD_VIEWS)
    .map((v) => `${viewStatement(v)};\n`)
    .join("\n")}`;
}
