// sensitive-data-access: labelled data returned in the period, by label, by resource and by
// person, with the top query fingerprints and normalized queries.
import { aggregationName } from "../../pipeline/names.js";
import { sensitiveQueries, text, type Row } from "../../warehouse/index.js";
import { defineKind, type Section } from "../spec.js";
import { personNotice, type KindContext } from "./context.js";

const queries = (ctx: KindContext) => sensitiveQueries(ctx.source);

/**
 * The aggregation job the labelled data comes from ("" when none is configured), and the
 * period's totals, read first.
 */
interface Facts {
  job: string;
  totals: Row;
  people: number;
}

/** The report's sections, in the order their first table is listed. */
const LABELS: Section = { id: "labels", title: "Labelled data returned" };
const PEOPLE: Section = { id: "people", title: "People" };
const QUERIES: Section = { id: "queries", title: "Queries" };

export const sensitiveDataAccess = defineKind<Facts>({
  title: "Sensitive data access",
  facts: async (ctx) => ({
    job: text(
      (await ctx.reader.rows(queries(ctx).labelJob, ctx.params))?.[0]?.job,
    ),
    totals: (await ctx.reader.rows(queries(ctx).totals, ctx.params))?.[0] ?? {},
    people: Number(
      (await ctx.reader.rows(queries(ctx).people, ctx.params))?.[0]?.people ??
        0,
    ),
  }),
  tables: [
    {
      id: "sensitive-by-label",
      section: LABELS,
      title: "Labelled data returned, by label",
      note: (_ctx, { job }) =>
        `Log events whose response returned columns with the label, from the aggregation job ${job || "(none)"}: events, resources, first and last hour seen.`,
      chart: "events",
      columns: [
        "label",
        "events:number",
        "resources:number",
        "first_seen",
        "last_seen",
      ],
      rows: (ctx) => queries(ctx).byLabel,
    },
    {
      id: "sensitive-by-label-resource",
      section: LABELS,
      title: "Labelled data returned, by label and resource",
      note: "The same events by the resource that returned them.",
      columns: [
        "label",
        "resource",
        "events:number",
        "first_seen",
        "last_seen",
      ],
      rows: (ctx) => queries(ctx).byLabelResource,
    },
    {
      id: "sensitive-by-person-label",
      section: PEOPLE,
      title: "People and the data labels of the resources they reached",
      note: "Sessions of each person on resources whose columns carry the label (the control plane's inventory), with the human behind machine and native users.",
      columns: [
        "person",
        "label",
        "sessions:number",
        "resources:number",
        "last_access",
      ],
      rows: (ctx) => queries(ctx).byPersonLabels,
      when: (ctx) => ctx.source === "enriched",
    },
    {
      id: "sensitive-people-on-labelled-resources",
      section: PEOPLE,
      title: "People with sessions on resources that returned labelled data",
      note: "Each person's sessions in the period on a resource that returned labelled data in the period, with the labels it returned. The logs are aggregated by resource, not by person: a session here reached such a resource, it did not necessarily return the labelled columns itself.",
      columns: [
        "person",
        "resource",
        "labels",
        "sessions:number",
        "last_access",
      ],
      rows: (ctx) => queries(ctx).byPersonResources,
    },
    {
      id: "sensitive-top-fingerprints",
      section: QUERIES,
      title: "Top query fingerprints returning labelled data",
      note: "The fingerprints in the top-value lists of the labelled-data job, summed over its windows starting in the period (a window lists its top values only).",
      chart: "queries",
      columns: ["fingerprint", "queries:number", "windows_in_top:number"],
      rows: (ctx) => queries(ctx).topFingerprints,
    },
    {
      id: "sensitive-top-normalized-queries",
      section: QUERIES,
      title: "Top normalized queries returning labelled data",
      note: "The same top-value lists, by normalized query text.",
      columns: ["normalized_query", "queries:number"],
      rows: (ctx) => queries(ctx).topNormalized,
    },
  ],
  summary: (_t, { totals, people }) => [
    { label: "Labelled events", value: Number(totals.events ?? 0) },
    { label: "Labels", value: Number(totals.labels ?? 0) },
    { label: "Resources", value: Number(totals.resources ?? 0) },
    { label: "People on those resources", value: people },
  ],
  notices: (_t, { job }, ctx) =>
    Promise.resolve([
      ...personNotice(ctx.source),
      ...(job === ""
        ? [
            {
              level: "warning" as const,
              text: "No aggregation job groups logs by response.returned_columns.data_label then resource.name (the default data_labels_by_resource): labelled data returned is not exported.",
            },
          ]
        : []),
    ]),
  streams: (_t, { job }) => [
    "sessions",
    ...(job ? [aggregationName({ name: job })] : []),
  ],
});
