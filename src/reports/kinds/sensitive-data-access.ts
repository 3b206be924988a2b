// sensitive-data-access: labelled data returned in the period, by label, by resource and by
// person, with the top query fingerprints and normalized queries.
import { aggregationName } from "../../pipeline/names.js";
import { sensitiveQueries, text } from "../../warehouse/index.js";
import { columns, table } from "../model.js";
import { personNotice, type KindContext, type KindResult } from "./context.js";

export async function sensitiveDataAccess(
  ctx: KindContext,
): Promise<KindResult> {
  const { reader, params } = ctx;
  const q = sensitiveQueries(ctx.source);
  const job = text((await reader.rows(q.labelJob, params))?.[0]?.job);
  const notices = personNotice(ctx.source);
  if (job === "")
    notices.push({
      level: "warning",
      text: "No aggregation job groups logs by response.returned_columns.data_label then resource.name (the default data_labels_by_resource): labelled data returned is not exported.",
    });
  const byLabel = table(
    {
      id: "sensitive-by-label",
      title: "Labelled data returned, by label",
      note: `Log events whose response returned columns with the label, from the aggregation job ${job || "(none)"}: events, resources, first and last hour seen.`,
      columns: columns(
        "label",
        "events:number",
        "resources:number",
        "first_seen",
        "last_seen",
      ),
      chart: { label: "label", value: "events" },
    },
    await reader.rows(q.byLabel, params),
    reader.missing(q.byLabel.needs),
  );
  const byResource = table(
    {
      id: "sensitive-by-label-resource",
      title: "Labelled data returned, by label and resource",
      note: "The same events by the resource that returned them.",
      columns: columns(
        "label",
        "resource",
        "events:number",
        "first_seen",
        "last_seen",
      ),
    },
    await reader.rows(q.byLabelResource, params),
    reader.missing(q.byLabelResource.needs),
  );
  const byPersonLabel =
    ctx.source === "enriched"
      ? table(
          {
            id: "sensitive-by-person-label",
            title: "People and the data labels of the resources they reached",
            note: "Sessions of each person on resources whose columns carry the label (the control plane's inventory), with the human behind machine and native users.",
            columns: columns(
              "person",
              "label",
              "sessions:number",
              "resources:number",
              "last_access",
            ),
          },
          await reader.rows(q.byPersonLabels, params),
          reader.missing(q.byPersonLabels.needs),
        )
      : undefined;
  const byPersonResource = table(
    {
      id: "sensitive-people-on-labelled-resources",
      title: "People with sessions on resources that returned labelled data",
      note: "Each person's sessions in the period on a resource that returned labelled data in the period, with the labels it returned. The logs are aggregated by resource, not by person: a session here reached such a resource, it did not necessarily return the labelled columns itself.",
      columns: columns(
        "person",
        "resource",
        "labels",
        "sessions:number",
        "last_access",
      ),
    },
    await reader.rows(q.byPersonResources, params),
    reader.missing(q.byPersonResources.needs),
  );
  const fingerprints = table(
    {
      id: "sensitive-top-fingerprints",
      title: "Top query fingerprints returning labelled data",
      note: "The fingerprints in the top-value lists of the labelled-data job, summed over its windows starting in the period (a window lists its top values only).",
      columns: columns(
        "fingerprint",
        "queries:number",
        "windows_in_top:number",
      ),
      chart: { label: "fingerprint", value: "queries" },
    },
    await reader.rows(q.topFingerprints, params),
    reader.missing(q.topFingerprints.needs),
  );
  const normalized = table(
    {
      id: "sensitive-top-normalized-queries",
      title: "Top normalized queries returning labelled data",
      note: "The same top-value lists, by normalized query text.",
      columns: columns("normalized_query", "queries:number"),
    },
    await reader.rows(q.topNormalized, params),
    reader.missing(q.topNormalized.needs),
  );
  const events = byLabel.rows.reduce((n, r) => n + Number(r.events), 0);
  return {
    title: "Sensitive data access",
    summary: [
      { label: "Labelled events", value: events },
      { label: "Labels", value: byLabel.rows.length },
      {
        label: "Resources",
        value: new Set(byResource.rows.map((r) => r.resource)).size,
      },
      {
        label: "People on those resources",
        value: new Set(byPersonResource.rows.map((r) => r.person)).size,
      },
    ],
    sections: [
      {
        id: "labels",
        title: "Labelled data returned",
        tables: [byLabel, byResource],
      },
      {
        id: "people",
        title: "People",
        tables: byPersonLabel
          ? [byPersonLabel, byPersonResource]
          : [byPersonResource],
      },
      { id: "queries", title: "Queries", tables: [fingerprints, normalized] },
    ],
    notices,
    streams: ["sessions", ...(job ? [aggregationName({ name: job })] : [])],
  };
}
