// Sends events to an HEC endpoint with Splunk's own Node.js logging
// library (npm splunk-logging), for stream/hec's tests. Arguments: URL,
// token, number of events. Events are batched (10 per request); each
// carries time, host, source, sourcetype and index. Prints one line per
// request callback: "ok <status>" or "err <message>".
const SplunkLogger = require("splunk-logging").Logger;

const [url, token, count] = process.argv.slice(2);
const logger = new SplunkLogger({ token: token, url: url, maxBatchCount: 10 });
// Verify the server certificate (NODE_EXTRA_CA_CERTS names the test CA).
logger.requestOptions.strictSSL = true;
logger.error = (err) => { console.log("err " + err.message); };

const n = parseInt(count, 10);
let pending = Math.ceil(n / 10);
for (let i = 0; i < n; i++) {
    logger.send({
        message: "node event " + i,
        severity: i % 2 ? "info" : "warn",
        metadata: {
            time: 1700000000.5 + i,
            host: "node-host",
            source: "node-source",
            sourcetype: "node-type",
            index: "main",
        },
    }, (err, resp, body) => {
        if (err) {
            console.log("err " + err.message);
        } else {
            console.log("ok " + resp.statusCode + " " + JSON.stringify(body));
        }
        if (--pending === 0) {
            process.exit(0);
        }
    });
}
