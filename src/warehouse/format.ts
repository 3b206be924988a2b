/** A DateTime64(3, 'UTC') literal for JSONEachRow: "2026-11-02 10:04:05.123". */
export function chTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 23).replace("T", " ");
}

/** Epoch milliseconds of a DateTime64 value as ClickHouse returns it in JSON ("… .123"). */
export function fromChTime(value: string): number {
  return Date.parse(value.replace(" ", "T") + "Z");
}

/** A DateTime('UTC') literal (whole seconds): "2026-11-02 10:05:00". */
export function chTimeSeconds(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19).replace("T", " ");
}
