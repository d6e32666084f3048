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

/**
 * Whether JSON text can hold a number that `keepsValue` would refuse: such a number has 16 or
 * more significant digits (a double keeps any 15) or a three-digit exponent (past ±1e308, or
 * into the subnormals). Text with neither a run of 16 digits and dots nor such an exponent has
 * none, and is parsed without the checking reviver (about six times slower than a plain parse).
 */
export function mayLoseDigits(text: string): boolean {
  return /[\d.]{16}|[eE][+-]?\d{3}/.test(text);
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
