/** The priority mapping per platform (docs/delivery.md). */
export const apnsPriority = (p: string) =>
  p === "low"
    ? { priority: 5, interruptionLevel: "passive" }
    : p === "high"
      ? { priority: 10, interruptionLevel: "time-sensitive" }
      : { priority: 10, interruptionLevel: "active" };

export const fcmPriority = (p: string): "high" | "normal" => (p === "high" ? "high" : "normal");

export const webPushUrgency = (p: string): "low" | "normal" | "high" =>
  p === "low" ? "low" : p === "high" ? "high" : "normal";
