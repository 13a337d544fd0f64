-- wrk's end of run, as one JSON line on stdout that bench/floor-support.js reads: requests, seconds, the latency
-- percentiles in milliseconds, and what went wrong (status: answers outside 2xx/3xx).
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests":%d,"seconds":%.6f,"p50":%.3f,"p90":%.3f,"p99":%.3f,"max":%.3f,"status":%d,"errors":%d}\n',
    summary.requests, summary.duration / 1e6, latency:percentile(50) / 1e3, latency:percentile(90) / 1e3,
    latency:percentile(99) / 1e3, latency.max / 1e3, e.status, e.connect + e.read + e.write + e.timeout))
end
