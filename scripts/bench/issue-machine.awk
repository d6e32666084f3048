# What this machine is against the issue's (issue 24), from before-after.sh's measurements of
# 2e4c979 and of this tree: lines "before|after KEY VALUE". The issue measured 2e4c979 on its own
# machine: 289 µs of CPU a REST publish and 236 µs a gRPC one, 0.47× and 0.57× its yardstick
# (one serving process, h2load at maximum, as held-out.sh runs it), "1,000 take 0.79 s" (the
# fan-out) and the APNs sender at 3,976 pushes/s. The before tree's mean here against the
# issue's figure is this machine's factor for that work; this tree's mean, scaled by it,
# estimates what the issue's machine would measure. An estimate, not a measurement: it holds
# only as far as both trees slow down alike on a slower machine.
{ sub(/x$/, "", $3); sum[$1 " " $2] += $3; n[$1 " " $2]++ }
function mean(side, key) { return n[side " " key] ? sum[side " " key] / n[side " " key] : 0 }
function cost(name, key, issue, target, unit,    b, a, f) {
  b = mean("before", key); a = mean("after", key)
  if (!b || !a) return
  f = b / issue
  printf "- %s: 2e4c979 %.0f %s here against the issue's %s %s, so this machine is %.2f× slower at it; this tree %.0f %s here, about %.0f %s there (target %s)\n", name, b, unit, issue, unit, f, a, unit, a / f, unit, target
}
function ratio(name, key, issue,    b, a) {
  b = mean("before", key); a = mean("after", key)
  if (!b || !a) return
  printf "- the %s maximum against the yardstick: 2e4c979 %.2f× here against the issue's %.2f×; this tree %.2f× here, about %.2f× there (target ≥ 1.0×)\n", name, b, issue, a, a * issue / b
}
END {
  print "**Against the issue's machine** (an estimate: see scripts/bench/issue-machine.awk)"
  cost("CPU a REST publish", "rest_us", 289, "≤ 120 µs", "µs")
  cost("CPU a gRPC publish", "grpc_us", 236, "≤ 120 µs", "µs")
  ratio("REST", "rest_ratio", 0.47)
  ratio("gRPC", "grpc_ratio", 0.57)
  b = mean("before", "fan_ms"); a = mean("after", "fan_ms")
  if (b && a && mean("before", "fan_devices") == 1000) {
    f = b / 790
    printf "- the fan-out: 2e4c979 %.0f ms for 1,000 devices here against the issue's 790 ms, so this machine is %.2f× slower at it; this tree %.0f ms for %d devices here, about %.0f ms there (target ≤ 2,000 ms for 10,000)\n", b, f, a, mean("after", "fan_devices"), a / f
  }
  b = mean("before", "apns"); a = mean("after", "apns")
  if (b && a) {
    f = 3976 / b
    printf "- the APNs sender: 2e4c979 %.0f/s here against the issue's 3,976/s, so this machine is %.2f× slower at it; this tree %.0f/s here, about %.0f/s there (target ≥ 5,000/s)\n", b, f, a, a * f
  }
}
