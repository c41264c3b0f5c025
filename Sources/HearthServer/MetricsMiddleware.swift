import Foundation
import Hummingbird
import Prometheus

/// Prometheus metrics of one server: requests by route, method and status, and a latency histogram.
public final class ServerMetrics: Sendable {
    /// The registry `/metrics` exposes.
    public let registry = PrometheusCollectorRegistry()
    let databaseSize: Gauge
    let listenConnections: Gauge
    let openTransactions: Gauge
    let listenCommitsDropped: Gauge
    let documentsScanned: Counter
    let inlineReads: Counter
    let inlineQueries: Counter
    let inlineWrites: Counter
    let readDecisionsHeld: Gauge
    let readDecisionsReused: Gauge
    let functionAttempts: Counter
    let functionDelivered: Counter
    let functionDead: Counter
    let functionDeliveryLatency: DurationHistogram
    let pushSent: Counter
    let pushFailed: Counter
    let pushDead: Counter
    let pushDroppedTokens: Counter
    let functionTimersPending: Gauge
    let functionTimersFired: Counter
    let functionScheduleRuns: Counter
    static let buckets: [Duration] = [
        .microseconds(100), .microseconds(250), .microseconds(500), .milliseconds(1), .milliseconds(2),
        .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50), .milliseconds(100),
        .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    init() {
        databaseSize = registry.gauge("hearth_database_size", unit: "bytes", "Size of the database file and its WAL")
        listenConnections = registry.gauge("hearth_listen_connections", "Open live-update (listen) connections")
        openTransactions = registry.gauge("hearth_open_transactions",
            "Transactions begun and not yet committed, rolled back or swept after expiring")
        listenCommitsDropped = registry.gauge("hearth_listen_dropped", unit: "commits",
            "Commits the live-update feed dropped while behind, reading its views again instead")
        documentsScanned = registry.counter("hearth_documents_scanned",
            "Documents read by queries, aggregations, listings and listener loads")
        inlineReads = registry.counter("hearth_inline_reads",
            "Document reads answered on the connection's event loop, ahead of the router")
        inlineQueries = registry.counter("hearth_inline_queries",
            "Queries answered on the connection's event loop, ahead of the router")
        inlineWrites = registry.counter("hearth_inline_writes",
            "Single-document writes answered from the connection's event loop, ahead of the router")
        readDecisionsHeld = registry.gauge("hearth_rules_read_decisions_held",
            "Rules decisions of document reads kept for reuse by the rules in force")
        readDecisionsReused = registry.gauge("hearth_rules_read_decisions_reused",
            "Document reads decided by a kept decision since the rules in force were loaded")
        functionAttempts = registry.counter("hearth_function_attempts", "Attempts to deliver function events, whatever their outcome")
        functionDelivered = registry.counter("hearth_function_delivered", "Function events acknowledged by their endpoint")
        functionDead = registry.counter("hearth_function_dead", "Function events given up on (dead)")
        pushSent = registry.counter("hearth_push_sent", "Push notifications accepted by APNs or FCM")
        pushFailed = registry.counter("hearth_push_failed", "Push notification attempts that failed (retried or dead)")
        pushDead = registry.counter("hearth_push_dead", "Push notifications given up on (dead)")
        pushDroppedTokens = registry.counter("hearth_push_dropped_tokens",
            "Push devices dropped because APNs or FCM reported their token unregistered or invalid")
        functionTimersPending = registry.gauge("hearth_function_timers_pending", "Function timers armed and not yet fired")
        functionTimersFired = registry.counter("hearth_function_timers_fired", "Function timers that came due and queued their event")
        functionScheduleRuns = registry.counter("hearth_function_schedule_runs",
            "Schedule slots that queued their event (a run missed while stopped counts once)")
        functionDeliveryLatency = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(metricName: "hearth_function_delivery_latency", unitName: "seconds",
                                             helpText: "Time from the commit that recorded a function event to its acknowledgement"),
            buckets: Self.buckets + [.seconds(10), .seconds(60), .seconds(600), .seconds(3600), .seconds(86_400)])
    }

    private nonisolated(unsafe) var scannedReported = 0

    /// Brings the scanned-documents counter up to the store's running total (read at each scrape).
    func reportScanned(_ total: Int) {
        lock.lock()
        let delta = total - scannedReported
        scannedReported = max(scannedReported, total)
        lock.unlock()
        if delta > 0 { documentsScanned.increment(by: Int64(delta)) }
    }

    struct Key: Hashable {
        let route: String
        let method: HTTPRequest.Method
        let status: Int
    }

    private let lock = NSLock()
    private nonisolated(unsafe) var instruments: [Key: (Counter, DurationHistogram)] = [:]

    func record(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status, duration: Duration) {
        let key = Key(route: route, method: method, status: status.code)
        lock.lock()
        let cached = instruments[key]
        lock.unlock()
        let (counter, histogram) = cached ?? makeInstruments(key)
        counter.increment()
        histogram.record(duration)
    }

    /// The registry's lookups build label strings; each route, method and status pays for that once.
    private func makeInstruments(_ key: Key) -> (Counter, DurationHistogram) {
        let counter = registry.makeCounter(
            descriptor: MetricNameDescriptor(metricName: "hearth_http_requests", unitName: "total",
                                             helpText: "HTTP requests by route, method and status"),
            labels: [("route", key.route), ("method", key.method.rawValue), ("status", String(key.status))])
        let histogram = registry.makeDurationHistogram(
            descriptor: MetricNameDescriptor(metricName: "hearth_http_request_duration", unitName: "seconds",
                                             helpText: "HTTP request latency"),
            labels: [("route", key.route), ("method", key.method.rawValue)],
            buckets: Self.buckets)
        lock.lock()
        instruments[key] = (counter, histogram)
        lock.unlock()
        return (counter, histogram)
    }
}

extension PrometheusCollectorRegistry {
    fileprivate func gauge(_ name: String, unit: String = "", _ help: String) -> Gauge {
        makeGauge(descriptor: MetricNameDescriptor(metricName: name, unitName: unit, helpText: help))
    }

    /// A counter's unit is `total`, Prometheus's suffix for counters.
    fileprivate func counter(_ name: String, _ help: String) -> Counter {
        makeCounter(descriptor: MetricNameDescriptor(metricName: name, unitName: "total", helpText: help))
    }
}
