/**
 * Whether a JSON number survives the trip through an IEEE 754 double (JavaScript's numbers,
 * protobuf's `Struct`) with its value intact: `1.0`, `1e3` and `0.1` do (they come back as `1`,
 * `1000` and `0.1`, the same decimal values); `12345678901234567890` and
 * `3.14159265358979323846` do not (digits are lost). Compares the decimal value of the JSON
 * text with that of the double's shortest round-trip form, exactly, digit by digit.
 */
export function keepsValue(source: string, value: number): boolean {
  if (!Number.isFinite(value)) return false;
  const a = decimal(source);
  const b = decimal(String(value));
  return a !== undefined && b !== undefined && a === b;
}

/** A canonical form of a decimal literal: sign, significant digits and exponent. */
function decimal(text: string): string | undefined {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!m) return undefined;
  const fraction = m[3] ?? "";
  let digits = `${m[2]}${fraction}`.replace(/^0+/, "");
  if (digits === "") return "0"; // zero, whatever its sign or exponent
  let exponent = Number(m[4] ?? 0) - fraction.length;
  const trimmed = digits.replace(/0+$/, "");
  exponent += digits.length - trimmed.length;
  digits = trimmed;
  return `${m[1]}${digits}e${exponent}`;
}
