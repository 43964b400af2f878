// An independent reader for the tests: HdrHistogram's JavaScript
// implementation (npm hdr-histogram-js), found through NODE_PATH.
//   node hdrjs.js percentiles < lines of base64 histograms
//     prints per histogram: count p0 p50 p90 p99 p99.9 p100
//   node hdrjs.js hlog FILE
//     prints per interval line: start_ms end_ms count max
//   node hdrjs.js hlogus FILE
//     the same with start_ms and end_ms to the microsecond (3 decimals)
const hdr = require("hdr-histogram-js");
const fs = require("fs");
const [mode, file] = process.argv.slice(2);
if (mode === "percentiles") {
  for (const line of fs.readFileSync(0, "utf8").split("\n")) {
    if (!line.trim()) continue;
    const h = hdr.decodeFromCompressedBase64(line.trim(), 64, false);
    const ps = [0, 50, 90, 99, 99.9, 100].map((p) => h.getValueAtPercentile(p));
    console.log([h.totalCount, ...ps].join(" "));
  }
} else if (mode === "hlog" || mode === "hlogus") {
  const ms = mode === "hlog" ? (t) => Math.round(t) : (t) => t.toFixed(3);
  const r = new hdr.HistogramLogReader(fs.readFileSync(file, "utf8"), 64);
  for (let h; (h = r.nextIntervalHistogram()) !== null; ) {
    console.log([ms(h.startTimeStampMsec), ms(h.endTimeStampMsec), h.totalCount, h.maxValue].join(" "));
  }
} else {
  console.error("usage: hdrjs.js percentiles|hlog|hlogus [FILE]");
  process.exit(2);
}
