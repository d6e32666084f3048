/**
 * A listen's place in its device's stream: the newest id it received, kept for each set of
 * topics a listen of the machine hears.
 */
import { describe, expect, it } from "vitest";
import { placeOf, type SavedDevice, withPlace } from "../../../src/cli/saved-devices.ts";
import { uuidv7At } from "../../../src/domain/ids.ts";
import { placeAfter } from "../../../src/domain/stream-place.ts";

describe("a stream's place", () => {
  it("is the newest id received, not the last to arrive", () => {
    const [older, newer] = [uuidv7At(Date.UTC(2026, 0, 1, 12)), uuidv7At(Date.UTC(2026, 0, 1, 13))];
    expect(placeAfter("", older)).toBe(older);
    expect(placeAfter(older, newer)).toBe(newer);
    // One committed out of its id's order arrives after a newer one: the place stays.
    expect(placeAfter(newer, older)).toBe(newer);
  });

  it("is kept for each set of topics, every topic's where older configs kept the one", () => {
    let d: SavedDevice = { id: "d", credential: "c", url: "http://h", cursor: "old" };
    expect(placeOf(d, [])).toBe("old");
    expect(placeOf(d, ["deploys"])).toBe("");
    d = withPlace(d, ["deploys", "ci"], "a");
    d = withPlace(d, ["deploys"], "b");
    // The order topics were given in does not matter; every topic's place is left alone.
    expect(placeOf(d, ["ci", "deploys"])).toBe("a");
    expect(placeOf(d, ["deploys"])).toBe("b");
    expect(placeOf(d, [])).toBe("old");
    expect(placeOf(withPlace(d, [], "c"), ["deploys"])).toBe("b");
    expect(withPlace(d, [], "c").cursor).toBe("c");
  });
});
