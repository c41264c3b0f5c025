import HearthMail
import HearthServer

extension ServerConfiguration {
    /// Serves the functions file at `path`, retrying failed deliveries within a fraction of a second so that
    /// tests of retries need not wait for the production backoff.
    public mutating func useFunctions(file path: String) {
        functionsFile = path
        functions.retry.initialDelay = .milliseconds(50)
        functions.retry.maxDelay = .milliseconds(200)
    }
}
