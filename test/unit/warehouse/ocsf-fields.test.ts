// The detections' Sigma field map reads the one OCSF field table (standards/ocsf-fields.ts): a
// name of another taxonomy maps onto a field the table has, and an OCSF name a rule writes has
// the table's value. The table's columns against the migrated schema, and its values against
// the OCSF view: test/integration/warehouse/standard-views.test.ts.
import { describe, expect, it } from "vitest";
import {
  SIGMA_TAXONOMY_FIELDS,
  sigmaField,
} from "../../../src/warehouse/detection-fields.js";
import { OCSF_FIELDS } from "../../../src/warehouse/standards/ocsf-fields.js";

describe("the Sigma field map", () => {
  it("maps every name of another taxonomy onto a field of the OCSF table, or computes it itself", () => {
    const onto = Object.entries(SIGMA_TAXONOMY_FIELDS).flatMap(([name, t]) =>
      "ocsf" in t ? [[name, t.ocsf] as const] : [],
    );
    expect(onto.length).toBeGreaterThan(5);
    expect(onto.filter(([, ocsf]) => OCSF_FIELDS[ocsf] === undefined)).toEqual(
      [],
    );
  });

  it("gives an OCSF name the table's value over the bare columns, and knows no other", () => {
    for (const [name, field] of Object.entries(OCSF_FIELDS))
      expect(sigmaField(name)).toEqual({
        name,
        field: { ...field, sql: field.sql((c) => c) },
      });
    expect(sigmaField("src_ip")?.name).toBe("src_endpoint.ip");
    expect(sigmaField("unmapped.connector_id")?.field.sql).toBe("connector_id");
    expect(sigmaField("actor.user.nmae")).toBeUndefined();
  });
});
